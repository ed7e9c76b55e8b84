import type { Collection } from 'mongodb';
import { MAX_INT64_EXACT, type Pet, type PetPage, type PetPageQuery } from './pet.ts';
import type { PetDocument, StoredDocument } from './pet-document.ts';

/** A stored document in id order: its pet, or null when it is not one (so it is not taken for a gap). */
export interface StoredEntry {
  id: number;
  pet: Pet | null;
}

type Read = (doc: StoredDocument) => Pet | null;

/**
 * Keyset pages of readable pets. Unreadable documents are skipped, so a page may need more
 * documents than `limit + 1`: it reads on after the last document seen, readable or not, until
 * it has one pet more than the page (that one only says a next page exists) or the end.
 */
export async function readPage(
  pets: Collection<PetDocument>,
  read: Read,
  { limit, status, afterId, signal }: PetPageQuery & { signal: AbortSignal },
): Promise<PetPage> {
  const found: Pet[] = [];
  let after: unknown = afterId;
  for (;;) {
    const filter: Record<string, unknown> = {};
    if (status !== undefined) filter.status = status;
    if (after !== undefined) filter._id = { $gt: after };
    const docs: StoredDocument[] = await pets
      .find(filter, { signal })
      .sort({ _id: 1 })
      .limit(limit + 1)
      .toArray();
    for (const doc of docs) {
      const pet = read(doc);
      if (pet) found.push(pet);
    }
    const last = docs.at(-1);
    if (found.length > limit || docs.length <= limit || last === undefined) break;
    after = last._id;
  }
  return { pets: found.slice(0, limit), hasNextPage: found.length > limit };
}

/** Every stored document with a numeric id above `afterId`, in id order, readable or not. */
export async function readAfter(
  pets: Collection<PetDocument>,
  read: Read,
  { afterId, limit, signal }: { afterId: number; limit: number; signal: AbortSignal },
): Promise<StoredEntry[]> {
  const docs: StoredDocument[] = await pets
    .find({ _id: { $gt: afterId, $lte: MAX_INT64_EXACT } }, { signal })
    .sort({ _id: 1 })
    .limit(limit)
    .toArray();
  // A numeric id of another BSON type (Long, Decimal128) still holds its place in the order.
  return docs.map((doc) => ({ id: typeof doc._id === 'number' ? doc._id : Number(String(doc._id)), pet: read(doc) }));
}

/**
 * The highest stored id a pet can have, undefined when none. Only ids a pet can have: a stored string
 * or 1e300 would otherwise become the counter (pet-ids.ts) or the feed's starting point.
 */
export async function highestStoredId(pets: Collection<PetDocument>, signal: AbortSignal): Promise<number | undefined> {
  const highest = await pets
    .find({ _id: { $gte: 1, $lte: MAX_INT64_EXACT } }, { projection: { _id: 1 }, signal })
    .sort({ _id: -1 })
    .limit(1)
    .next();
  return highest ? Number(highest._id) : undefined;
}

/** The highest id a pet can have among the stored ones, 0 when none; rounded down, so a stored 5.5 leaves 6 still to come. */
export async function highestId(pets: Collection<PetDocument>, signal: AbortSignal): Promise<number> {
  return Math.floor((await highestStoredId(pets, signal)) ?? 0);
}

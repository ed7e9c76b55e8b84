import type { IdempotencyRecord, IdempotencyStore } from '../src/idempotency/idempotency-store.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import type { Stores } from '../src/stores.ts';

/** Idempotency records in a Map: the same contract as the collection, for targets without a database. */
export function createMemoryIdempotencyStore(): IdempotencyStore {
  const records = new Map<string, IdempotencyRecord>();
  return {
    find: async (id) => records.get(id) ?? null,
    claim: async (record) => {
      if (records.has(record._id)) return false;
      records.set(record._id, { ...record });
      return true;
    },
    movePetId: async (id, from, to) => {
      const record = records.get(id);
      if (record?.petId !== from) return false;
      record.petId = to;
      return true;
    },
    forget: async (record) => {
      if (records.get(record._id)?.createdAt.getTime() === record.createdAt.getTime()) records.delete(record._id);
    },
    purgeCreatedBefore: async (before) => {
      let deleted = 0;
      for (const [id, record] of records) {
        if (record.createdAt < before && records.delete(id)) deleted++;
      }
      return deleted;
    },
  };
}

/**
 * The service's stores around one pet repository; the rest in memory (no issued keys: API_KEYS only;
 * the published documents given, by id).
 */
export function memoryStoresAround(pets: PetRepository, published = new Map<string, string>()): Stores {
  return {
    pets,
    idempotencyRecords: createMemoryIdempotencyStore(),
    issuedKeys: { active: async () => [], recordUse: async () => {} },
    persistedDocuments: { ids: async () => [...published.keys()], find: async (id) => published.get(id) ?? null },
    ping: async () => {},
  };
}

import { GET_PET_DEPRECATION_REASON } from '../../deprecations.ts';
import { decodeCursor, encodeCursor } from '../../pets/cursor.ts';
import { LIST_LIMIT, type NewPet, PET_NAME_MAX_LENGTH, type Pet, type PetPage } from '../../pets/pet.ts';
import { categoryIdRule, listLimitRule, NULL_STATUS_REASON, petIdRule, petNameRule } from '../../pets/pet-rules.ts';
import { builder } from '../builder.ts';
import { badUserInput } from '../errors.ts';
import { checkedBy, refusingNull } from '../input-rules.ts';
import { listSize } from '../list-size.ts';
import { Int64 } from './int64.ts';
import { PET_STATUS_VALUES } from './pet-status.ts';

/** Stripe's name for it: the answer is the stored result of an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

export const PetStatus = builder.enumType('PetStatus', {
  description: 'Availability of a pet. The REST contract spells the values in lower case.',
  values: PET_STATUS_VALUES,
});

export const PetRef = builder.objectRef<Pet>('Pet').implement({
  description: 'An animal in the store.',
  fields: (t) => ({
    id: t.id({
      description: 'Unique int64 id, assigned by the service, as a decimal string.',
      resolve: (pet) => String(pet.id),
    }),
    name: t.exposeString('name'),
    categoryId: t.expose('categoryId', { type: Int64 }),
    status: t.field({ type: PetStatus, nullable: true, resolve: (pet) => pet.status ?? null }),
  }),
});

const NewPetInput = builder.inputType('NewPet', {
  description: `A pet to add. The service assigns the id. Names hold 1 to ${PET_NAME_MAX_LENGTH} characters, not all whitespace, and no control or format characters or line separators (Unicode Cc, Cf, Zl, Zp).`,
  fields: (t) => ({
    name: t.string({ required: true, ...checkedBy(petNameRule) }),
    categoryId: t.field({ type: Int64, required: true, ...checkedBy(categoryIdRule) }),
    status: t.field({ type: PetStatus, description: 'Omit it to leave the status unset; null is refused.' }),
  }),
  // An explicit null would be stored as "no status" while looking like a value was sent.
  ...refusingNull({ status: NULL_STATUS_REASON }),
});

const PageInfo = builder.objectRef<{ hasNextPage: boolean; endCursor: string | null }>('PageInfo').implement({
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage'),
    hasPreviousPage: t.boolean({ description: 'Always false: pages only go forward.', resolve: () => false }),
    endCursor: t.exposeString('endCursor', { nullable: true }),
  }),
});

const PetEdge = builder.objectRef<Pet>('PetEdge').implement({
  fields: (t) => ({
    cursor: t.string({ resolve: (pet) => encodeCursor(pet.id) }),
    node: t.field({ type: PetRef, resolve: (pet) => pet }),
  }),
});

const PetConnection = builder.objectRef<PetPage>('PetConnection').implement({
  fields: (t) => ({
    edges: t.field({ type: [PetEdge], resolve: (page) => page.pets }),
    nodes: t.field({ type: [PetRef], resolve: (page) => page.pets }),
    pageInfo: t.field({
      type: PageInfo,
      resolve: ({ pets, hasNextPage }) => {
        const last = pets.at(-1);
        return { hasNextPage, endCursor: last ? encodeCursor(last.id) : null };
      },
    }),
  }),
});

/** The id a cursor argument points after; BAD_USER_INPUT naming `field` when it is not one of ours. */
export function afterIdFrom(field: string, cursor: string | null | undefined): number | undefined {
  if (cursor === null || cursor === undefined) return undefined;
  const id = decodeCursor(cursor);
  if (id === null) throw badUserInput(field, 'is not a cursor issued by this service');
  return id;
}

builder.queryFields((t) => ({
  pets: t.field({
    type: [PetRef],
    description: `Pets in ascending id order. Pass the last id's cursor (from petsConnection) as \`after\` for the next page.`,
    args: {
      limit: t.arg.int({ defaultValue: LIST_LIMIT.default, validate: listLimitRule }),
      status: t.arg({ type: PetStatus }),
      after: t.arg.string({ description: 'Opaque cursor: list pets after this one.' }),
    },
    extensions: listSize('limit'),
    resolve: async (_root, args, ctx) => {
      const page = await ctx.pets.listPage({
        limit: args.limit ?? LIST_LIMIT.default,
        status: args.status ?? undefined,
        afterId: afterIdFrom('after', args.after),
      });
      return page.pets;
    },
  }),
  petsConnection: t.field({
    type: PetConnection,
    description: 'Relay-style pages of pets; `Pet.id` stays the plain id.',
    args: {
      first: t.arg.int({ defaultValue: LIST_LIMIT.default, validate: listLimitRule }),
      after: t.arg.string({ description: 'The endCursor of the previous page.' }),
      status: t.arg({ type: PetStatus }),
    },
    extensions: listSize('first'),
    resolve: (_root, args, ctx) =>
      ctx.pets.listPage({
        limit: args.first ?? LIST_LIMIT.default,
        status: args.status ?? undefined,
        afterId: afterIdFrom('after', args.after),
      }),
  }),
  pet: t.field({
    type: PetRef,
    nullable: true,
    deprecationReason: GET_PET_DEPRECATION_REASON,
    description: 'The pet with this id, or null when there is none.',
    args: { id: t.arg.id({ required: true, validate: petIdRule }) },
    resolve: (_root, args, ctx) => ctx.pets.findById(Number(args.id)),
  }),
}));

builder.mutationField('createPet', (t) =>
  t.field({
    type: PetRef,
    description:
      'Adds a pet and returns it with its new id. With an `Idempotency-Key` header, a retry with the same key and input returns the same pet (header `Idempotent-Replayed: true`) instead of adding another.',
    args: { input: t.arg({ type: NewPetInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const newPet: NewPet = { name: input.name, categoryId: input.categoryId };
      if (input.status) newPet.status = input.status;
      const { pet, replayed } = await ctx.createPet(newPet, ctx.exchange);
      if (replayed) ctx.exchange.setResponseHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
      return pet;
    },
  }),
);

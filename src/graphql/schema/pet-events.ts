import { encodeCursor } from '../../pets/cursor.ts';
import type { Pet } from '../../pets/pet.ts';
import { builder } from '../builder.ts';
import { afterIdFrom, PetRef, PetStatus } from './pet.ts';

interface PetCreatedEvent {
  cursor: string;
  pet: Pet;
}

const PetCreated = builder.objectRef<PetCreatedEvent>('PetCreated').implement({
  description: 'A pet newly stored, as petCreated delivers it.',
  fields: (t) => ({
    cursor: t.exposeString('cursor', {
      description: "The pet's cursor, as petsConnection's: pass the last one received as `after` to resume after it.",
    }),
    pet: t.field({ type: PetRef, resolve: (event) => event.pet }),
  }),
});

builder.subscriptionField('petCreated', (t) =>
  t.field({
    type: PetCreated,
    description:
      'Each pet as it is stored: each pet once, in ascending id order, unless it was stored more than the settle window (SUBSCRIPTION_SETTLE_MS) after a pet with a higher id was. With `after`, first every pet after that cursor, then new ones. A key holds at most MAX_SUBSCRIPTIONS_PER_KEY streams per instance (429 TOO_MANY_SUBSCRIPTIONS beyond); a stopping instance ends its streams, to be resumed with the last cursor.',
    args: {
      status: t.arg({ type: PetStatus, description: 'Only pets of this status.' }),
      after: t.arg.string({
        description: 'Opaque cursor (PetCreated.cursor or petsConnection): deliver the pets after it first.',
      }),
    },
    subscribe: (_root, args, ctx) =>
      ctx.followPets({ afterId: afterIdFrom('after', args.after), status: args.status ?? undefined }, ctx.exchange),
    resolve: (pet: Pet) => ({ cursor: encodeCursor(pet.id), pet }),
  }),
);

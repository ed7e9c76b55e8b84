import { InvalidIdempotencyKeyError } from '../errors.ts';
import { idempotencyKeyOf } from '../idempotency/idempotency-key.ts';
import type { IdempotentCreates } from '../idempotency/idempotent-create.ts';
import type { NewPet, Pet } from './pet.ts';
import type { PetRepository } from './pet-repository.ts';

/** Who asks for a create: enough to scope its Idempotency-Key and to drop it if the client leaves. */
export interface CreatingExchange {
  keyId: string;
  clientGone(): boolean;
  /** The Idempotency-Key header's values, each apart; undefined when none was sent. */
  headerValues(name: 'idempotency-key'): readonly string[] | undefined;
}

export interface CreatedPet {
  pet: Pet;
  /** True when the pet was stored by an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

export type CreatePet = (newPet: NewPet, exchange: CreatingExchange) => Promise<CreatedPet>;

/** The createPet use case, shared by both faces: a plain create, or one under an Idempotency-Key. */
export function createPetUseCase(pets: PetRepository, idempotentCreates: IdempotentCreates): CreatePet {
  // One key names one create: a second createPet in the same request would only replay the first.
  const keyed = new WeakSet<CreatingExchange>();
  return async (newPet, exchange) => {
    const header = idempotencyKeyOf(exchange.headerValues('idempotency-key'));
    if (header.problem !== undefined) throw new InvalidIdempotencyKeyError(header.problem);
    // A create whose client has gone is dropped before it takes an id or stores anything.
    const clientGone = () => exchange.clientGone();
    if (header.key === undefined) return { pet: await pets.create(newPet, { clientGone }), replayed: false };
    if (keyed.has(exchange)) throw new InvalidIdempotencyKeyError('covers one createPet per request');
    keyed.add(exchange);
    return idempotentCreates.create(newPet, { apiKeyId: exchange.keyId, idempotencyKey: header.key, clientGone });
  };
}

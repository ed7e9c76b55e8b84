import type { IdempotentCreates } from './idempotency/idempotent-create.ts';
import type { PetRepository } from './pets/pet-repository.ts';

/** What resolvers see. The edge has already authenticated the request; `keyId` says who made it. */
export interface Context extends RequestIdentity {
  pets: PetRepository;
  /** Creates under an Idempotency-Key; absent when the service keeps no idempotency records. */
  idempotentCreates?: IdempotentCreates;
  /** Set by the first create under the request's Idempotency-Key. */
  idempotencyKeySpent?: boolean;
}

/** What the edge hands to execution for every request, GraphQL or REST. */
export interface RequestIdentity {
  /** Which face was called: both run the same operations through the same envelop. */
  face: 'graphql' | 'rest';
  /** Which API key made the request (its id, never the key). */
  keyId: string;
  /** True once the client has gone away: work queued for it can be dropped. */
  clientGone: () => boolean;
  /** The request's Idempotency-Key header (POST only), already checked for length. */
  idempotencyKey?: string;
  /** Adds a header to the response, whichever face writes it (a replay says so). */
  setResponseHeader: (name: string, value: string) => void;
}

/** Runs once per operation, so it only picks up what the edge already established. */
export function createContextFactory(pets: PetRepository, idempotentCreates?: IdempotentCreates) {
  return ({ face, keyId, clientGone, idempotencyKey, setResponseHeader }: RequestIdentity): Context => ({
    face,
    pets,
    idempotentCreates,
    keyId,
    clientGone,
    idempotencyKey,
    setResponseHeader,
  });
}

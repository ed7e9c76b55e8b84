import type { PetRepository } from './pets/pet-repository.ts';

/** What resolvers see. The edge has already authenticated the request; `keyId` says who made it. */
export interface Context {
  pets: PetRepository;
  /** Which API key made the request (a hash prefix, never the key). */
  keyId: string;
  /** True once the client has gone away: work queued for it can be dropped. */
  clientGone: () => boolean;
}

/** What the edge hands to execution for every request, GraphQL or REST. */
export interface RequestIdentity {
  keyId: string;
  /** True once the client has gone away: work queued for it can be dropped. */
  clientGone: () => boolean;
}

/** Runs once per operation, so it only picks up what the edge already established. */
export function createContextFactory(pets: PetRepository) {
  return ({ keyId, clientGone }: RequestIdentity): Context => ({ pets, keyId, clientGone });
}

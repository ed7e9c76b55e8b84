import type { PetRepository } from './pets/pet-repository.ts';

/** What resolvers see. The edge has already authenticated the request; `keyId` says who made it. */
export interface Context {
  pets: PetRepository;
  /** Which API key made the request (a hash prefix, never the key). */
  keyId: string;
}

/** What the edge hands to execution for every request, GraphQL or REST. */
export interface RequestIdentity {
  keyId: string;
}

/** Runs once per operation, so it only picks up what the edge already established. */
export function createContextFactory(pets: PetRepository) {
  return ({ keyId }: RequestIdentity): Context => ({ pets, keyId });
}

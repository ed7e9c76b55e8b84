import type { Scopes } from './auth/scopes.ts';
import type { Face } from './http/send-error.ts';
import type { CreatePet, CreatingExchange } from './pets/create-pet.ts';
import type { PetRepository } from './pets/pet-repository.ts';

/** What execution sees of the exchange, GraphQL or REST (the edge's Exchange is one; bench passes a plain object). */
export interface ExecutionExchange extends CreatingExchange {
  /** The request id the client got back (X-Request-Id): every log line about the request carries it. */
  id: string;
  /** Which face was called: both run the same operations, with the same rules. */
  face: Face;
  /** Adds a header to the response, whichever face writes it (a replay says so). */
  setResponseHeader(name: string, value: string): void;
  /** Whether the key may send GraphQL documents of its own (TRUSTED_DOCUMENTS=enforce asks). */
  readonly arbitraryDocuments: boolean;
  /** What the key may do: each operation is admitted by the scope it needs (operation-admission.ts). */
  readonly scopes: Scopes;
  /** The published document the request ran by id (`sha256:…`), '' for a document sent whole. */
  documentId: string;
}

/** Yoga's server context: the edge passes the request's exchange under this one name. */
export interface ServerContext {
  exchange: ExecutionExchange;
}

/** What resolvers see. The edge has already authenticated the request. */
export interface Context extends ServerContext {
  pets: PetRepository;
  createPet: CreatePet;
}

/** Runs once per operation, so it only picks up what the edge already established. */
export function createContextFactory(pets: PetRepository, createPet: CreatePet) {
  return ({ exchange }: ServerContext): Context => ({ pets, createPet, exchange });
}

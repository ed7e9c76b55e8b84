import type { Scopes } from './auth/scopes.ts';
import type { StreamRecord } from './http/exchange.ts';
import type { Face } from './http/send-json.ts';
import type { CreatePet, CreatingExchange } from './pets/create-pet.ts';
import type { Pet } from './pets/pet.ts';
import type { PetFeedQuery } from './pets/pet-feed.ts';
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
  /** Set once the request opens a subscription stream (open-streams.ts): the access log reads it. */
  stream?: StreamRecord | undefined;
  /** Runs `listener` once the response is over: a stream's slot is released then at the latest. */
  whenClosed?(listener: () => void): void;
  /** Cuts the connection the response travels on: a stream that did not end when told to (open-streams.ts). */
  cut?(): void;
}

/** Yoga's server context: the edge passes the request's exchange under this one name. */
export interface ServerContext {
  exchange: ExecutionExchange;
}

/**
 * New pets for one subscriber, within the instance's stream limits: throws the refusal (a
 * GraphQLError with its status) when the key or the instance has no stream left.
 */
export type FollowPets = (query: PetFeedQuery, exchange: ExecutionExchange) => AsyncGenerator<Pet, void, undefined>;

/** What resolvers see. The edge has already authenticated the request. */
export interface Context extends ServerContext {
  pets: PetRepository;
  createPet: CreatePet;
  followPets: FollowPets;
}

/** Runs once per operation, so it only picks up what the edge already established. */
export function createContextFactory(pets: PetRepository, createPet: CreatePet, followPets: FollowPets) {
  return ({ exchange }: ServerContext): Context => ({ pets, createPet, followPets, exchange });
}

// The peers built on fastify (issue 37): what a team would write with the usual libraries instead of
// our edge, each with request logging and rate limits as the comparison asks. `fastify` serves the
// REST get by id, `mercurius` (with graphql-jit) the GraphQL `pet(id:)` query over our schema.
//
// Both log through fastify's pino request logging (its two lines per request, at info) into the same
// destination our service's targets use (createLogger: batched writes to /dev/null), and count every
// request per API key with @fastify/rate-limit at the bench's per-key rate, which never trips. They do
// not authenticate, send no ETag nor CORS fields, and charge no price per field: those are ours.

import type { IncomingMessage, ServerResponse } from 'node:http';
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import mercurius from 'mercurius';
import type { Context } from '../src/context.ts';
import { schema } from '../src/graphql/schema/index.ts';
import { createLogger } from '../src/logger.ts';
import { MAX_INT64_EXACT, PET_STATUSES } from '../src/pets/pet.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';

export interface Peer {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Resolves once the peer's plugins and routes are loaded: before it, it routes nothing. */
  ready: Promise<void>;
  close(): Promise<void>;
}

const loggingApp = () => Fastify({ loggerInstance: createLogger('info', '/dev/null') });
type PeerApp = ReturnType<typeof loggingApp>;

/**
 * A fastify app with its request logging at info and every request counted per key, as our service
 * does, then `routes`; served by its router as a node:http listener, mounted like the other targets.
 * The app is never passed through a promise: it is thenable, and resolving it would wait for it.
 */
function peer(ratePerKey: number, routes: (app: PeerApp) => Promise<unknown> | undefined): Peer {
  const app = loggingApp();
  const ready = (async () => {
    // Before the routes: the limit hooks onto each route as it is declared.
    await app.register(rateLimit, {
      max: ratePerKey,
      timeWindow: 1_000,
      keyGenerator: (request) => request.headers.authorization ?? request.ip,
    });
    await routes(app);
    await app.ready();
  })();
  return {
    listener: (req, res) => app.routing(req, res),
    ready,
    close: async () => {
      await ready.catch(() => {});
      await app.close();
    },
  };
}

const ID = { type: 'integer', minimum: 1, maximum: MAX_INT64_EXACT } as const;

/** The contract's Pet, for fastify's validation of the id and its serializer (fast-json-stringify). */
const PET_RESPONSE = {
  type: 'object',
  required: ['id', 'name', 'categoryId'],
  properties: { id: ID, name: { type: 'string' }, categoryId: ID, status: { type: 'string', enum: PET_STATUSES } },
} as const;

/** GET {basePath}/pets/:petId as fastify would write it: schema-validated id, 404 for no pet, serialized by schema. */
export function fastifyPeer(pets: PetRepository, basePath: string, ratePerKey: number): Peer {
  return peer(ratePerKey, (app) => {
    app.get<{ Params: { petId: number } }>(
      `${basePath}/pets/:petId`,
      {
        schema: {
          params: { type: 'object', required: ['petId'], properties: { petId: ID } },
          response: { 200: PET_RESPONSE },
        },
      },
      async (request, reply) => {
        const pet = await pets.findById(request.params.petId);
        if (pet) return pet;
        return reply.code(404).send({ code: 'PET_NOT_FOUND', message: `No pet has the id ${request.params.petId}` });
      },
    );
    return undefined;
  });
}

/** mercurius on our schema with graphql-jit (compiled on a document's first run) and our resolvers' context. */
export function mercuriusPeer(context: () => Context, ratePerKey: number): Peer {
  return peer(ratePerKey, async (app) => {
    await app.register(mercurius, { schema, context, jit: 1, graphiql: false, path: '/graphql' });
  });
}

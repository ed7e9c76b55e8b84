// The request listeners compared over one repository. They differ only in the layers between
// node:http and the repository, so their ratios to `floor` are those layers' cost; `rest-redis` differs
// from `rest` only in where the rate limits count (Redis instead of memory), `rest-silent` only in
// its logger's level (silent: no access log). The tracing processes
// (tracing-servers.ts) serve `ourService` alone. The fastify-based peers live in fastify-peers.ts.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { useSofa } from '@graphql-yoga/plugin-sofa';
import type { Tracer } from '@opentelemetry/api';
import { createYoga } from 'graphql-yoga';
import { EVERY_SCOPE } from '../src/auth/scopes.ts';
import { parseConfig } from '../src/config.ts';
import type { Context, ExecutionExchange } from '../src/context.ts';
import { schema } from '../src/graphql/schema/index.ts';
import { createIdempotentCreates } from '../src/idempotency/idempotent-create.ts';
import { createLogger } from '../src/logger.ts';
import { createMetrics, type Metrics } from '../src/metrics/metrics.ts';
import { createPetUseCase } from '../src/pets/create-pet.ts';
import type { NewPet } from '../src/pets/pet.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import { createService, type Service } from '../src/service.ts';
import { fastifyPeer, mercuriusPeer } from './fastify-peers.ts';
import { publishedBenchDocuments } from './graphql-documents.ts';
import { memoryStoresAround } from './memory-stores.ts';
import type { Target } from './protocol.ts';

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Where the peer mounts its generated routes: GET /sofa/pet/:id, GET /sofa/pets, POST /sofa/create-pet. */
export const SOFA_BASE_PATH = '/sofa';
export const REST_BASE_PATH = '/v1';

/** The floor: routing, the same repository call, JSON; no auth, no logging, no GraphQL, no limits. */
export function floorListener(pets: PetRepository): Listener {
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  };
  const fail = (res: ServerResponse) => () => send(res, 500, { status: 500 });
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'POST' && url.pathname === '/pets') {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const newPet = JSON.parse(Buffer.concat(chunks).toString('utf8')) as NewPet;
        pets.create(newPet).then((pet) => send(res, 201, pet), fail(res));
      });
      return;
    }
    if (req.method !== 'GET') return send(res, 405, { status: 405 });
    if (url.pathname === '/pets') {
      const limit = Number(url.searchParams.get('limit') ?? 20);
      pets.listPage({ limit }).then((page) => send(res, 200, page.pets), fail(res));
      return;
    }
    const byId = /^\/pets\/([0-9]+)$/.exec(url.pathname);
    if (!byId?.[1]) return send(res, 404, { status: 404 });
    pets.findById(Number(byId[1])).then((pet) => send(res, pet ? 200 : 404, pet ?? { status: 404 }), fail(res));
  };
}

/** The targets of the main servers process (the tracing ones have processes of their own). */
export type MainTarget = Exclude<Target, `${string}-otel-${string}`>;

export interface Targets {
  listeners: Record<MainTarget, Listener>;
  /** Resolves once `rest-redis` counts in Redis (it starts counting in memory while it connects). */
  ready: Promise<void>;
  close(): Promise<void>;
}

const SHARED_WITHIN_MS = 10_000;

/** Requests per second per key for our services and the peers that limit: the limits stay on the path but never trip. */
export const BENCH_RATE_PER_KEY = 1_000_000;

/** Resolves when the service's metrics say its rate limits count in Redis. */
async function countingInRedis(metrics: Metrics): Promise<void> {
  const deadline = Date.now() + SHARED_WITHIN_MS;
  while (!/^rate_limit_store_shared 1$/m.test(await metrics.scrape.text())) {
    if (Date.now() > deadline) throw new Error(`rest-redis did not reach Redis within ${SHARED_WITHIN_MS} ms`);
    await new Promise((waited) => setTimeout(waited, 20));
  }
}

export interface OurServiceOptions {
  /** Over the bench's environment (the key, limits that never trip). */
  env?: Record<string, string>;
  metrics?: Metrics;
  /** Tracing on (a tracing process): GraphQL spans, server spans named by route, trace ids in logs. */
  tracer?: Tracer;
  /** `info` unless said: `silent` measures the service without its access log. */
  logLevel?: string;
}

/** Our service over the pets, with the key the load generator sends, as main.ts composes it. */
export function ourService(pets: PetRepository, apiKey: string, options: OurServiceOptions = {}): Service {
  // One key drives all the load.
  const rate = String(BENCH_RATE_PER_KEY);
  const environment = { API_KEYS: apiKey, RATE_LIMIT_PER_KEY: rate, RATE_LIMIT_BURST: rate };
  return createService({
    config: parseConfig({ ...environment, ...options.env }),
    stores: memoryStoresAround(pets, publishedBenchDocuments()),
    // Level info to a real (if discarded) destination: the access log is part of what users run.
    logger: createLogger(options.logLevel ?? 'info', '/dev/null', { traceContext: options.tracer !== undefined }),
    metrics: options.metrics ?? createMetrics(),
    ...(options.tracer ? { tracer: options.tracer } : {}),
  });
}

/** What the GraphQL peers' resolvers get: the context our resolvers read, every scope, no subscriptions. */
export function peerContext(pets: PetRepository): () => Context {
  const records = memoryStoresAround(pets).idempotencyRecords;
  const createPet = createPetUseCase(pets, createIdempotentCreates({ pets, records, retentionMs: 3_600_000 }));
  const exchange: ExecutionExchange = {
    id: 'bench',
    face: 'graphql',
    keyId: 'bench',
    clientGone: () => false,
    setResponseHeader: () => {},
    headerValues: () => undefined,
    arbitraryDocuments: true,
    scopes: EVERY_SCOPE,
    documentId: '',
  };
  // The peers are measured on queries and creates: they serve no subscriptions.
  const followPets = () => {
    throw new Error('the peers serve no subscriptions');
  };
  return () => ({ pets, createPet, followPets, exchange });
}

/** All of them over one repository; our services get the key the load generator sends. */
export function createTargets(pets: PetRepository, apiKey: string, redisUrl: string): Targets {
  const service = ourService(pets, apiKey);
  const silentService = ourService(pets, apiKey, { logLevel: 'silent' });
  const redisMetrics = createMetrics();
  const redisService = ourService(pets, apiKey, { env: { REDIS_URL: redisUrl }, metrics: redisMetrics });
  // The peers get the same schema and the context our resolvers read, and nothing else.
  const context = peerContext(pets);
  const sofa = createYoga({ schema, context, plugins: [useSofa({ basePath: SOFA_BASE_PATH })] });
  const yoga = createYoga({ schema, context });
  const fastify = fastifyPeer(pets, REST_BASE_PATH, BENCH_RATE_PER_KEY);
  const mercurius = mercuriusPeer(context, BENCH_RATE_PER_KEY);
  return {
    listeners: {
      floor: floorListener(pets),
      rest: service.listener,
      'rest-silent': silentService.listener,
      'rest-redis': redisService.listener,
      sofa: (req, res) => void sofa(req, res),
      fastify: fastify.listener,
      graphql: service.listener,
      'graphql-by-id': service.listener,
      yoga: (req, res) => void yoga(req, res),
      mercurius: mercurius.listener,
    },
    ready: Promise.all([countingInRedis(redisMetrics), fastify.ready, mercurius.ready]).then(() => {}),
    close: async () => {
      await service.close();
      await silentService.close();
      await redisService.close();
      await fastify.close();
      await mercurius.close();
    },
  };
}

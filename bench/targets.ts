// The five request listeners compared over one repository. They differ only in the layers between
// node:http and the repository, so their ratios to `floor` are those layers' cost.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { useSofa } from '@graphql-yoga/plugin-sofa';
import { createYoga } from 'graphql-yoga';
import { schema } from '../src/graphql/schema/index.ts';
import { createLogger } from '../src/logger.ts';
import type { NewPet } from '../src/pets/pet.ts';
import type { PetRepository } from '../src/pets/pet-repository.ts';
import { createService } from '../src/service.ts';
import type { Target } from './protocol.ts';

export type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Where the peer mounts its generated routes: GET /sofa/pet/:id, GET /sofa/pets, POST /sofa/create-pet. */
export const SOFA_BASE_PATH = '/sofa';
export const REST_BASE_PATH = '/v1';
const MAX_BODY_BYTES = 16_384;

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

export interface Targets {
  listeners: Record<Target, Listener>;
  close(): Promise<void>;
}

/** All five over one repository; our service gets the key the load generator sends. */
export function createTargets(pets: PetRepository, apiKey: string): Targets {
  const service = createService({
    pets,
    apiKeys: [apiKey],
    // Level info to a real (if discarded) destination: the access log is part of what users run.
    logger: createLogger('info', '/dev/null'),
    restBasePath: REST_BASE_PATH,
    maxBodyBytes: MAX_BODY_BYTES,
    checkDatabase: async () => {},
    // One key drives all the load: the limits themselves stay on the path, but never trip.
    rateLimits: { perKey: { rate: 1e9, burst: 1e9 }, authFailures: { rate: 1e9, burst: 1e9 } },
  });
  // The peers get the same schema and the context shape our resolvers read, and nothing else.
  const context = () => ({ pets, keyId: 'bench', clientGone: () => false });
  const sofa = createYoga({ schema, context, plugins: [useSofa({ basePath: SOFA_BASE_PATH })] });
  const yoga = createYoga({ schema, context });
  return {
    listeners: {
      floor: floorListener(pets),
      rest: service.listener,
      sofa: (req, res) => void sofa(req, res),
      graphql: service.listener,
      yoga: (req, res) => void yoga(req, res),
    },
    close: () => service.close(),
  };
}

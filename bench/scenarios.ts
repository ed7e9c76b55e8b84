// What each target is asked, per operation: one request autocannon repeats, and a check that one
// such request answers what the row claims to measure (run before measuring; a wrong route that
// answers 404 fast would otherwise win).

import { documentIdOf } from '../src/documents/document-id.ts';
import { DOCUMENTS, NEW_PET } from './graphql-documents.ts';
import {
  BY_ID_TARGET_OPERATIONS,
  FASTIFY_PEER_OPERATIONS,
  REDIS_TARGET_OPERATIONS,
  SILENT_TARGET_OPERATIONS,
  type StoreName,
  TARGETS,
  type Target,
  TRACING_TARGET_OPERATIONS,
  tracingModeOf,
} from './protocol.ts';
import { REST_BASE_PATH, SOFA_BASE_PATH } from './targets.ts';

export const OPERATIONS = ['get', 'list20', 'list100', 'create'] as const;
export type Operation = (typeof OPERATIONS)[number];
export const OPERATION_LABEL: Record<Operation, string> = {
  get: 'get by id',
  list20: 'list 20',
  list100: 'list 100',
  create: 'create',
};

export interface HttpRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export interface Scenario {
  store: StoreName;
  operation: Operation;
  target: Target;
  /** The request as a person would write it, for the report. */
  description: string;
  request: HttpRequest;
  /** Throws unless a response is what this scenario claims to measure. */
  check(status: number, body: unknown): void;
}

/** yoga, mercurius, graphql and the traced graphql-otel-* speak GraphQL over POST /graphql; the rest answer bare values. */
const speaksGraphQL = (target: Target) => target === 'yoga' || target === 'mercurius' || target.startsWith('graphql');

/** Which operations a target runs: the extra ones (Redis limits, tracing) only where their cost shows. */
function runs(target: Target, operation: Operation): boolean {
  if (target === 'rest-redis') return REDIS_TARGET_OPERATIONS.includes(operation);
  if (target === 'rest-silent') return SILENT_TARGET_OPERATIONS.includes(operation);
  if (target === 'graphql-by-id') return BY_ID_TARGET_OPERATIONS.includes(operation);
  if (target === 'fastify' || target === 'mercurius') return FASTIFY_PEER_OPERATIONS.includes(operation);
  if (tracingModeOf(target)) return TRACING_TARGET_OPERATIONS.includes(operation);
  return true;
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/** GraphQL answers carry the value under data.<field>; the REST-style targets answer it bare. */
function unwrap(target: Target, operation: Operation, body: unknown): unknown {
  if (!speaksGraphQL(target)) return body;
  const result = body as { data?: Record<string, unknown>; errors?: unknown };
  assert(!result.errors, `GraphQL errors: ${JSON.stringify(result.errors)}`);
  return result.data?.[DOCUMENTS[operation].field];
}

function checker(operation: Operation, target: Target, sampleId: number, seeded: number) {
  return (status: number, body: unknown) => {
    const value = unwrap(target, operation, body) as Record<string, unknown> | Record<string, unknown>[] | undefined;
    if (operation === 'create') {
      assert(status === 200 || status === 201, `status ${status}`);
      const pet = value as Record<string, unknown>;
      assert(pet?.name === NEW_PET.name && Number(pet.id) > seeded, 'expected the new pet with a new id');
      return;
    }
    assert(status === 200, `status ${status}`);
    if (operation === 'get') {
      const pet = value as Record<string, unknown>;
      assert(String(pet?.id) === String(sampleId) && pet.name === `Pet ${sampleId}`, `expected pet ${sampleId}`);
      return;
    }
    const size = operation === 'list20' ? 20 : 100;
    assert(Array.isArray(value) && value.length === size && String(value[0]?.id) === '1', `expected pets 1..${size}`);
  };
}

function requestFor(
  target: Target,
  operation: Operation,
  base: string,
  auth: Record<string, string>,
  sampleId: number,
): HttpRequest {
  const json = { ...auth, 'content-type': 'application/json', accept: 'application/json' };
  if (speaksGraphQL(target)) {
    const { query, variables } = DOCUMENTS[operation];
    // graphql-by-id: the same operation named by its published id instead of sent whole.
    const sent = target === 'graphql-by-id' ? { documentId: documentIdOf(query) } : { query };
    return {
      url: `${base}/graphql`,
      method: 'POST',
      headers: json,
      body: JSON.stringify({ ...sent, variables: variables(sampleId) }),
    };
  }
  const limit = operation === 'list100' ? 100 : 20;
  // Sofa names its routes after the fields: /pet/:id, /pets, /create-pet taking { input }.
  const paths: Record<'floor' | 'rest' | 'sofa', Record<Operation, string>> = {
    floor: { get: `/pets/${sampleId}`, list20: '/pets?limit=20', list100: '/pets?limit=100', create: '/pets' },
    rest: {
      get: `${REST_BASE_PATH}/pets/${sampleId}`,
      list20: `${REST_BASE_PATH}/pets?limit=20`,
      list100: `${REST_BASE_PATH}/pets?limit=100`,
      create: `${REST_BASE_PATH}/pets`,
    },
    sofa: {
      get: `${SOFA_BASE_PATH}/pet/${sampleId}`,
      list20: `${SOFA_BASE_PATH}/pets?limit=${limit}`,
      list100: `${SOFA_BASE_PATH}/pets?limit=${limit}`,
      create: `${SOFA_BASE_PATH}/create-pet`,
    },
  };
  const url = `${base}${paths[target === 'floor' || target === 'sofa' ? target : 'rest'][operation]}`;
  if (operation !== 'create') return { url, method: 'GET', headers: auth };
  const body = target === 'sofa' ? { input: { ...NEW_PET, status: 'AVAILABLE' } } : { ...NEW_PET, status: 'available' };
  return { url, method: 'POST', headers: json, body: JSON.stringify(body) };
}

/**
 * Every request carries the key, even to targets that ignore it, so all send the same headers.
 * `urls` maps each target served to its base URL; `sampleId` is a seeded pet, `seeded` their count.
 */
export function scenariosFor(
  store: StoreName,
  urls: Partial<Record<Target, string>>,
  apiKey: string,
  sampleId: number,
  seeded: number,
): Scenario[] {
  const auth = { authorization: `Bearer ${apiKey}` };
  return OPERATIONS.flatMap((operation) =>
    TARGETS.filter((target) => urls[target] !== undefined && runs(target, operation)).map((target) => {
      const base = urls[target] as string;
      const request = requestFor(target, operation, base, auth, sampleId);
      const path = request.url.replace(base, '');
      const description =
        request.body && speaksGraphQL(target)
          ? `POST ${path} ${DOCUMENTS[operation].query.split(' {')[0]}${target === 'graphql-by-id' ? ' by documentId' : ''}`
          : `${request.method} ${path}`;
      return { store, operation, target, description, request, check: checker(operation, target, sampleId, seeded) };
    }),
  );
}

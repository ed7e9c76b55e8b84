import type { ResultOf, TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { Scope } from '../auth/scopes.ts';
import { priceOf } from '../graphql/operation-admission.ts';
import { type PetStatusName, petStatusName } from '../graphql/schema/pet-status.ts';
import { PET_STATUSES, type PetStatus } from '../pets/pet.ts';
import type { RestPetFragment } from './__generated__/graphql.ts';
import { invalidParameter, RestError } from './http-errors.ts';
import { CreatePetOperation, GetPetOperation, ListPetsOperation } from './operation-documents.ts';

/** What an operation sees of a request once it is authenticated and its body parsed. */
export interface RestRequest {
  pathParams: Readonly<Record<string, string>>;
  query: URLSearchParams;
  body: unknown;
  basePath: string;
}

export interface RestResult {
  status: number;
  /** The body, already JSON. */
  json: string;
  headers?: Record<string, string>;
  /** A page that has a next one: that page's cursor (the `Link` header's, for those who read no headers). */
  next?: string;
}

/** One operation of the contract: the GraphQL document it runs and how HTTP maps to and from it. */
export interface RestOperation<TData = unknown> {
  operationId: string;
  method: 'GET' | 'POST';
  /** OpenAPI-style template relative to the base path. */
  path: string;
  document: TypedDocumentNode<TData, never>;
  hasBody: boolean;
  deprecated?: boolean;
  /** The contract's name for a GraphQL argument path (`first` -> `limit`), for error messages. */
  restField(graphqlPath: string): string;
  /** The contract's wording of a problem GraphQL found with a field, where their values differ (status). */
  restReason?(restField: string, reason: string, request: RestRequest): string;
  /** Request parts to variables; throws a 400 RestError for a part that cannot become one. */
  variables(request: RestRequest): Record<string, unknown>;
  respond(data: TData, request: RestRequest): RestResult;
}

/** The scope an operation's GraphQL document needs (pets:read for a query, pets:write for a mutation). */
export function scopeOf(operation: RestOperation): Scope | undefined {
  return priceOf(operation.document)?.scope;
}

/** The contract's status values and the GraphQL enum's names, both from the domain's one list. */
const STATUS_NAMES = new Map<unknown, PetStatusName>(PET_STATUSES.map((status) => [status, petStatusName(status)]));
const STATUS_VALUES = new Map<string, PetStatus>(PET_STATUSES.map((status) => [petStatusName(status), status]));

function single(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw invalidParameter(name, 'must be given at most once');
  return all[0];
}

function integerParam(query: URLSearchParams, name: string): number | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  if (!/^-?[0-9]{1,20}$/.test(raw)) throw invalidParameter(name, 'must be an integer');
  return Number(raw);
}

const NOT_A_STATUS_REASON = `must be one of ${PET_STATUSES.join(', ')}`;
/** Never a GraphQL enum name (a name has no spaces): the enum's coercion refuses it with the other fields. */
const NOT_A_STATUS = 'not a contract status';

function statusName(raw: unknown, name: string): PetStatusName | undefined {
  if (raw === undefined) return undefined;
  const found = STATUS_NAMES.get(raw);
  if (!found) throw invalidParameter(name, NOT_A_STATUS_REASON);
  return found;
}

/** A body status that is given, not null, and not one of the contract's values. */
const isUnknownStatus = (status: unknown) => status !== undefined && status !== null && !STATUS_NAMES.has(status);

const quote = JSON.stringify;

/**
 * A pet as the contract writes it, in JSON: GraphQL gives ids as strings and nulls for unset fields;
 * the contract wants numbers and absence. Written directly (the name is the one value that needs
 * escaping) rather than as an object per pet for JSON.stringify, which measured slower when this was
 * written: docs/benchmarks.md has the figures.
 */
function restPetJson(pet: RestPetFragment): string {
  const status = pet.status ? `,"status":${quote(STATUS_VALUES.get(pet.status))}` : '';
  return `{"id":${Number(pet.id)},"name":${quote(pet.name)},"categoryId":${quote(pet.categoryId)}${status}}`;
}

const LIST_FIELDS: Readonly<Record<string, string>> = { first: 'limit', after: 'cursor' };

const listPets: RestOperation<ResultOf<typeof ListPetsOperation>> = {
  operationId: 'listPets',
  method: 'GET',
  path: '/pets',
  document: ListPetsOperation,
  hasBody: false,
  restField: (path) => LIST_FIELDS[path] ?? path,
  variables: ({ query }) => ({
    limit: integerParam(query, 'limit'),
    status: statusName(single(query, 'status'), 'status'),
    cursor: single(query, 'cursor'),
  }),
  respond: ({ petsConnection }, { query, basePath }) => {
    const headers: Record<string, string> = {};
    const { hasNextPage, endCursor } = petsConnection.pageInfo;
    const nextCursor = hasNextPage && endCursor ? endCursor : undefined;
    if (nextCursor) {
      // RFC 8288 next link keeping the caller's limit and status; the body stays a bare array.
      const next = new URLSearchParams();
      for (const name of ['limit', 'status']) {
        const value = query.get(name);
        if (value !== null) next.set(name, value);
      }
      next.set('cursor', nextCursor);
      headers.Link = `<${basePath}/pets?${next.toString()}>; rel="next"`;
    }
    const json = `[${petsConnection.nodes.map(restPetJson).join(',')}]`;
    return { status: 200, json, headers, ...(nextCursor ? { next: nextCursor } : {}) };
  },
};

const createPet: RestOperation<ResultOf<typeof CreatePetOperation>> = {
  operationId: 'createPet',
  method: 'POST',
  path: '/pets',
  document: CreatePetOperation,
  hasBody: true,
  // The body is the NewPet input: `input.name` is the body's `name`.
  restField: (path) => (path === 'input' ? 'body' : path.replace(/^input\./, '')),
  variables: ({ body }) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new RestError('BAD_USER_INPUT', 'The request body must be a JSON object (a NewPet)');
    }
    const input: Record<string, unknown> = { ...body };
    // null goes on for GraphQL to refuse ("must not be null"), and so does a value outside the
    // contract (as one the enum refuses): the variable walk names it with every other invalid field.
    if (isUnknownStatus(input.status)) input.status = NOT_A_STATUS;
    else if (input.status != null) input.status = STATUS_NAMES.get(input.status);
    return { input };
  },
  restReason: (field, reason, { body }) =>
    field === 'status' && isUnknownStatus((body as Record<string, unknown>).status) ? NOT_A_STATUS_REASON : reason,
  respond: ({ createPet: pet }, { basePath }) => ({
    status: 201,
    json: restPetJson(pet),
    headers: { Location: `${basePath}/pets/${pet.id}` },
  }),
};

const getPet: RestOperation<ResultOf<typeof GetPetOperation>> = {
  operationId: 'getPet',
  method: 'GET',
  path: '/pets/{petId}',
  document: GetPetOperation,
  hasBody: false,
  deprecated: true,
  restField: (path) => (path === 'id' ? 'petId' : path),
  variables: ({ pathParams }) => ({ petId: pathParams.petId ?? '' }),
  respond: ({ pet }, { pathParams }) => {
    // GraphQL says "no such pet" with null; the contract says it with 404.
    if (!pet) throw new RestError('PET_NOT_FOUND', `No pet has the id ${pathParams.petId}`);
    return { status: 200, json: restPetJson(pet) };
  },
};

/** The contract's operations in the order their paths are matched (result types erased to list them together). */
export const REST_OPERATIONS = [listPets, createPet, getPet] as unknown as readonly RestOperation[];

import type { ResultOf, TypedDocumentNode } from '@graphql-typed-document-node/core';
import type { GraphQLEnumType } from 'graphql';
import type { RestPetFragment } from './__generated__/graphql.ts';
import { invalidParameter, RestError } from './http-errors.ts';
import { CreatePetOperation, GetPetOperation, ListPetsOperation } from './operations.ts';

/** What a route sees of a request once it is authenticated and its body parsed. */
export interface RestRequest {
  pathParams: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  basePath: string;
}

export interface RestResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Translates between the contract's lower-case status values and the GraphQL enum's names. */
export interface StatusCodec {
  toName(value: string): string | undefined;
  toValue(name: string): string;
  values: readonly string[];
}

export function createStatusCodec(petStatus: GraphQLEnumType): StatusCodec {
  const entries = petStatus.getValues().map(({ name, value }) => [String(value), name] as const);
  const names = new Map(entries);
  const values = new Map(entries.map(([value, name]) => [name, value]));
  return {
    toName: (value) => names.get(value),
    toValue: (name) => values.get(name) ?? name,
    values: [...names.keys()],
  };
}

export interface Route<TData = unknown> {
  operationId: string;
  method: 'GET' | 'POST';
  /** OpenAPI-style template relative to the base path. */
  path: string;
  document: TypedDocumentNode<TData, never>;
  hasBody: boolean;
  deprecated?: boolean;
  /** GraphQL argument names that the contract spells differently, for error messages. */
  renames: Readonly<Record<string, string>>;
  /** Request parts to variables; throws a 400 RestError for a part that cannot become one. */
  variables(request: RestRequest, status: StatusCodec): Record<string, unknown>;
  respond(data: TData, request: RestRequest, status: StatusCodec): RestResult;
}

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

function statusName(raw: unknown, name: string, status: StatusCodec): string | undefined {
  if (raw === undefined) return undefined;
  const found = typeof raw === 'string' ? status.toName(raw) : undefined;
  if (!found) throw invalidParameter(name, `must be one of ${status.values.join(', ')}`);
  return found;
}

/** GraphQL gives ids as strings and nulls for unset fields; the contract wants numbers and absence. */
function toRestPet(pet: RestPetFragment, status: StatusCodec): Record<string, unknown> {
  const rest: Record<string, unknown> = { id: Number(pet.id), name: pet.name, categoryId: pet.categoryId };
  if (pet.status) rest.status = status.toValue(pet.status);
  return rest;
}

const listPets: Route<ResultOf<typeof ListPetsOperation>> = {
  operationId: 'listPets',
  method: 'GET',
  path: '/pets',
  document: ListPetsOperation,
  hasBody: false,
  renames: { first: 'limit', after: 'cursor' },
  variables: ({ query }, status) => ({
    limit: integerParam(query, 'limit'),
    status: statusName(single(query, 'status'), 'status', status),
    cursor: single(query, 'cursor'),
  }),
  respond: ({ petsConnection }, { query, basePath }, status) => {
    const headers: Record<string, string> = {};
    const { hasNextPage, endCursor } = petsConnection.pageInfo;
    if (hasNextPage && endCursor) {
      // RFC 8288 next link keeping the caller's limit and status; the body stays a bare array.
      const next = new URLSearchParams();
      for (const name of ['limit', 'status']) {
        const value = query.get(name);
        if (value !== null) next.set(name, value);
      }
      next.set('cursor', endCursor);
      headers.Link = `<${basePath}/pets?${next.toString()}>; rel="next"`;
    }
    return { status: 200, body: petsConnection.nodes.map((pet) => toRestPet(pet, status)), headers };
  },
};

const createPet: Route<ResultOf<typeof CreatePetOperation>> = {
  operationId: 'createPet',
  method: 'POST',
  path: '/pets',
  document: CreatePetOperation,
  hasBody: true,
  renames: { input: '' },
  variables: ({ body }, status) => {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new RestError('BAD_USER_INPUT', 'The request body must be a JSON object (a NewPet)');
    }
    const input: Record<string, unknown> = { ...body };
    // null goes on for GraphQL to refuse ("must not be null"); any other value must be a contract value.
    if ('status' in input && input.status !== null) input.status = statusName(input.status, 'status', status);
    return { input };
  },
  respond: ({ createPet: pet }, { basePath }, status) => ({
    status: 201,
    body: toRestPet(pet, status),
    headers: { Location: `${basePath}/pets/${pet.id}` },
  }),
};

const getPet: Route<ResultOf<typeof GetPetOperation>> = {
  operationId: 'getPet',
  method: 'GET',
  path: '/pets/{petId}',
  document: GetPetOperation,
  hasBody: false,
  deprecated: true,
  renames: { id: 'petId' },
  variables: ({ pathParams }) => ({ petId: pathParams.petId ?? '' }),
  respond: ({ pet }, { pathParams }, status) => {
    // GraphQL says "no such pet" with null; the contract says it with 404.
    if (!pet) throw new RestError('PET_NOT_FOUND', `No pet has the id ${pathParams.petId}`);
    return { status: 200, body: toRestPet(pet, status) };
  },
};

/** Erases each route's result type once, here, so the adapter can hold them in one table. */
function untyped<TData>(route: Route<TData>): Route {
  return route as unknown as Route;
}

export const routes: readonly Route[] = [untyped(listPets), untyped(createPet), untyped(getPet)];

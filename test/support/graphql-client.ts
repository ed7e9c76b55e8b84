/**
 * One way for the tests to speak GraphQL: a typed document from ./operations.ts (codegen) goes in,
 * its typed result comes out, over the real HTTP server (graphql-code-generator `examples/yoga-tests`).
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { expect } from 'vitest';
import type { CreatePetMutationVariables } from './__generated__/graphql.ts';
import { CreatePetDocument } from './operations.ts';
import { AUTH, type TestServer } from './test-server.ts';

export interface GraphQLResponseError {
  message: string;
  extensions?: Record<string, unknown>;
}

export interface GraphQLResponse<TResult> {
  status: number;
  headers: Record<string, string | undefined>;
  body: { data?: TResult | null; errors?: GraphQLResponseError[] };
}

declare const invalid: unique symbol;
/** Variables that break the operation's types on purpose: the server, not tsc, has to refuse them. */
export type InvalidVariables = Record<string, unknown> & { readonly [invalid]: true };
export const invalidVariables = (variables: Record<string, unknown>): InvalidVariables => variables as InvalidVariables;

/** A typed operation, with its variables; headers replace the default key (`{}` sends none). */
export function executeGraphQL<TResult, TVariables>(
  server: TestServer,
  document: TypedDocumentNode<TResult, TVariables>,
  variables: TVariables | InvalidVariables,
  headers?: Record<string, string>,
): Promise<GraphQLResponse<TResult>>;
/** A document a test writes inline because it breaks a rule on purpose (it cannot be codegen input). */
export function executeGraphQL(
  server: TestServer,
  document: string,
  variables?: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<GraphQLResponse<unknown>>;
export async function executeGraphQL(
  server: TestServer,
  document: TypedDocumentNode | string,
  variables: unknown = {},
  headers: Record<string, string> = AUTH,
): Promise<GraphQLResponse<unknown>> {
  const query = typeof document === 'string' ? document : print(document);
  const response = await server.request.post('/graphql').set(headers).send({ query, variables });
  return { status: response.status, headers: response.headers, body: response.body };
}

/** The data of a response that must have some (a response without data fails the test here). */
export function dataOf<TResult>(response: GraphQLResponse<TResult>): TResult {
  const { data } = response.body;
  expect(data, JSON.stringify(response.body)).toBeTruthy();
  return data as TResult;
}

/** The first error of a response that must have one. */
export function firstError(response: GraphQLResponse<unknown>): GraphQLResponseError {
  const [error] = response.body.errors ?? [];
  expect(error, JSON.stringify(response.body)).toBeDefined();
  return error as GraphQLResponseError;
}

/** Exactly one error, BAD_USER_INPUT, naming the field in its extensions and in its message. */
export function expectBadUserInput(response: GraphQLResponse<unknown>, field: string): GraphQLResponseError {
  expect(response.body.errors, JSON.stringify(response.body)).toHaveLength(1);
  const error = firstError(response);
  expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
  expect(error.message).toContain(`"${field}"`);
  return error;
}

/** Adds a pet over GraphQL and returns it; any error fails the test. */
export async function createPetOverGraphQL(server: TestServer, input: CreatePetMutationVariables['input']) {
  const response = await executeGraphQL(server, CreatePetDocument, { input });
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  return dataOf(response).createPet;
}

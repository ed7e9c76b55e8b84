import type { Attributes } from '@opentelemetry/api';
import { type DocumentNode, type GraphQLSchema, getOperationAST, type OperationTypeNode, validate } from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { ExecuteSpans } from '../telemetry/graphql-spans.ts';
import { type OperationPrice, priceOf } from './operation-admission.ts';

/** One operation of a document that is known to be valid, compiled by graphql-jit once. */
export interface CompiledOperation {
  document: DocumentNode;
  operationName: string | undefined;
  /** The operation's own name (undefined when anonymous) and type, for metrics. */
  name: string | undefined;
  type: OperationTypeNode;
  query: CompiledQuery['query'];
  /** graphql-jit's serialiser for this operation's results, as Yoga uses it. */
  stringify: CompiledQuery['stringify'];
  /** The execute span's attributes, while tracing. */
  spanAttributes: Attributes | undefined;
  /** The scope it needs and its price in rate-limit points, worked out once. */
  price: OperationPrice;
}

/** Compiles one operation; throws when the document does not match the schema (a bug in ours). */
export function compileOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  executeSpans: ExecuteSpans | undefined,
): CompiledOperation {
  const selected = getOperationAST(document, operationName);
  if (!selected) throw new Error(`the document has no operation ${operationName ?? 'to run without a name'}`);
  const name = selected.name?.value;
  const [invalid] = validate(schema, document);
  if (invalid) throw new Error(`operation ${name} does not match the schema: ${invalid.message}`);
  const compiled = compileQuery(schema, document, operationName);
  if (!isCompiledQuery(compiled)) {
    throw new Error(`operation ${name} does not compile: ${compiled.errors?.[0]?.message}`);
  }
  return {
    document,
    operationName,
    name,
    type: selected.operation,
    query: compiled.query.bind(compiled),
    stringify: compiled.stringify,
    spanAttributes: executeSpans?.attributesOf(document, operationName),
    price: priceOf(document, operationName) as OperationPrice,
  };
}

import { type DocumentNode, type FieldNode, type GraphQLError, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { missingScopeMessage, type Scope } from '../auth/scopes.ts';
import type { Context, ExecutionExchange } from '../context.ts';
import { oncePerDocument, rootFieldsOf } from './document-walk.ts';
import { codedError, ErrorCode } from './errors.ts';

/** What an operation needs before it may run: a scope (none: any key) and its price in rate-limit points. */
export interface OperationPrice {
  scope: Scope | undefined;
  /** One point per root field it runs, at least one: the point the edge took at authentication. */
  cost: number;
  /** Only `__schema`/`__type` (and `__typename`) at the root: its answer depends on the schema alone. */
  introspection: boolean;
}

/** A rate-limit refusal, as the edge answers it: the message and the 429's headers. */
export interface ChargeRefusal {
  message: string;
  headers: Record<string, string>;
}

/** Charges `cost` points to the request's key, of which the edge took one: a refusal, or undefined. */
export type ChargeExchange = (
  exchange: ExecutionExchange,
  cost: number,
) => Promise<ChargeRefusal | undefined> | undefined;

/**
 * Introspection at the root reads the schema, not the store: open to any key (GraphiQL needs it), but
 * `__schema` and `__type` cost a point each like any field, since a full answer is large to build and
 * send. `__typename` is free: it costs no more than a name.
 */
const isMetaField = ({ name }: FieldNode) => name.value.startsWith('__');
const isIntrospection = (field: FieldNode) => isMetaField(field) && field.name.value !== '__typename';

/** Each document's prices by operation name. */
const pricesOf = oncePerDocument(() => new Map<string, OperationPrice>());

/**
 * The price of the operation a request selects, once per document and operation: queries need
 * `pets:read`, mutations `pets:write`, pure introspection no scope (it still pays). Undefined when no
 * operation is selected; such names are not remembered, so clients cannot grow the memory.
 */
export function priceOf(document: DocumentNode, operationName?: string | null): OperationPrice | undefined {
  const key = operationName ?? '';
  const prices = pricesOf(document);
  const known = prices.get(key);
  if (known) return known;
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  // The response keys its root selection runs: those that read the store, and introspection's.
  const keys = [...rootFieldsOf(document, operation).values()];
  const data = keys.filter((fields) => !fields.every(isMetaField)).length;
  const introspection = keys.filter((fields) => fields.some(isIntrospection)).length;
  const needed: Scope = operation.operation === 'mutation' ? 'pets:write' : 'pets:read';
  const price = {
    scope: data === 0 ? undefined : needed,
    cost: Math.max(1, data + introspection),
    introspection: data === 0 && introspection > 0,
  };
  prices.set(key, price);
  return price;
}

/** Not a request error: the key is known and lacks the scope, on both media types (as a 401 or 429 is). */
function forbidden(scope: Scope): GraphQLError {
  return codedError(missingScopeMessage(scope), ErrorCode.FORBIDDEN, { status: 403 }, { scope });
}

function rateLimited({ message, headers }: ChargeRefusal): GraphQLError {
  return codedError(message, ErrorCode.RATE_LIMITED, { status: 429, headers });
}

export type Admission = GraphQLError | undefined | Promise<GraphQLError | undefined>;

type Decide = (price: OperationPrice, exchange: ExecutionExchange) => Admission;

/** What onExecute and onSubscribe are both given: the operation, and a way to answer it with errors. */
interface OperationHook {
  args: { document: DocumentNode; operationName?: string | null | undefined; contextValue: Context };
  setResultAndStopExecution(result: { errors: GraphQLError[] }): void;
}

/** Runs `decide` before the operation runs, stopping it with its error when it refuses. */
function decideBefore(decide: Decide, { args, setResultAndStopExecution }: OperationHook): void | Promise<void> {
  const price = priceOf(args.document, args.operationName);
  if (!price) return;
  const admitted = decide(price, args.contextValue.exchange);
  if (!admitted) return;
  if (!(admitted instanceof Promise)) return setResultAndStopExecution({ errors: [admitted] });
  return admitted.then((refused) => {
    if (refused) setResultAndStopExecution({ errors: [refused] });
  });
}

// Envelop calls onSubscribe, not onExecute, for subscriptions.
function beforeRunning(decide: Decide): Plugin<Context> {
  return {
    onExecute: (hook) => decideBefore(decide, hook),
    onSubscribe: (hook) => decideBefore(decide, hook),
  };
}

/**
 * Whether an operation may run, decided between validation and execution: the key's scope first
 * (`admit`), then, after every limit on the document, its price charged to the key's rate limit
 * (`charge`), so a request refused for its shape pays nothing more. Yoga runs them as plugins; the
 * direct execution (REST, the fast path) calls them itself in the same order.
 */
export function createOperationAdmission(options: { charge?: ChargeExchange }) {
  const charges = options.charge;

  function admit(price: OperationPrice, exchange: ExecutionExchange): GraphQLError | undefined {
    return price.scope && !exchange.scopes.has(price.scope) ? forbidden(price.scope) : undefined;
  }

  function charge(price: OperationPrice, exchange: ExecutionExchange): Admission {
    if (price.cost <= 1) return undefined;
    return charges?.(exchange, price.cost)?.then((refusal) => refusal && rateLimited(refusal));
  }

  return {
    admit,
    charge,
    /** After every rule that judges the document, before the list-size limit and graphql-jit. */
    scopePlugin: beforeRunning(admit),
    /** After the list-size limit, before graphql-jit runs the operation. */
    chargePlugin: beforeRunning(charge),
  };
}

export type OperationAdmission = ReturnType<typeof createOperationAdmission>;

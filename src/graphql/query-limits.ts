import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { createGraphQLError } from '@graphql-tools/utils';
import { type DocumentNode, GraphQLError, Kind, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { fieldOverlap, operationShapes, type Shape } from './document-shape.ts';
import { MAX_ERRORS, tooManyErrors } from './errors.ts';

/**
 * GraphQL Armor's defaults, and two of our own that bound graphql-js's validation: fragment
 * definitions (its overlap rule compares fragments pairwise) and field overlap (see fieldOverlap).
 */
export const QUERY_LIMITS = {
  depth: 6,
  aliases: 15,
  directives: 50,
  tokens: 1000,
  cost: 5000,
  fragments: 50,
  overlap: 10_000,
} as const;

/** Each limit on a document's shape: its code, and what a client reads when it is over. */
const shapeLimits: { [K in keyof Shape]: { code: string; says: (found: number, limit: number) => string } } = {
  depth: {
    code: 'QUERY_TOO_DEEP',
    says: (found, limit) => `This operation nests fields ${found} levels deep; at most ${limit} are allowed`,
  },
  aliases: {
    code: 'TOO_MANY_ALIASES',
    says: (found, limit) => `This operation has ${found} aliases; at most ${limit} are allowed`,
  },
  directives: {
    code: 'TOO_MANY_DIRECTIVES',
    says: (found, limit) => `This operation has ${found} directives; at most ${limit} are allowed`,
  },
  cost: {
    code: 'QUERY_TOO_COMPLEX',
    says: (found, limit) => `This operation costs ${found}; at most ${limit} is allowed`,
  },
};

/**
 * A refusal before anything runs, so a request error: 400 under application/graphql-response+json,
 * 200 under application/json, as Yoga answers validation errors.
 */
const requestError = (message: string, extensions: Record<string, unknown>) =>
  createGraphQLError(message, { extensions: { ...extensions, http: { status: 400, spec: true } } });

/** A measured figure as a client reads it: whole, and past 2^53 not exact anyway. */
const reported = (figure: number) => Math.min(Math.ceil(figure), Number.MAX_SAFE_INTEGER);

function shapeProblem(shape: Shape): GraphQLError | undefined {
  for (const key of Object.keys(shapeLimits) as (keyof Shape)[]) {
    const limit = QUERY_LIMITS[key];
    if (shape[key] <= limit) continue;
    const found = reported(shape[key]);
    const { code, says } = shapeLimits[key];
    return requestError(`${says(found, limit)} (fragments count each time they are spread)`, { code, found, limit });
  }
  return undefined;
}

/** The limits on what graphql-js's rules compare pairwise: fragments, then fields sharing a name. */
function validationWorkProblem(document: DocumentNode): GraphQLError | undefined {
  const fragments = document.definitions.filter(({ kind }) => kind === Kind.FRAGMENT_DEFINITION).length;
  const { fragments: maxFragments, overlap: maxOverlap } = QUERY_LIMITS;
  if (fragments > maxFragments) {
    return requestError(`This document defines ${fragments} fragments; at most ${maxFragments} are allowed`, {
      code: 'TOO_MANY_FRAGMENTS',
      found: fragments,
      limit: maxFragments,
    });
  }
  const overlap = fieldOverlap(document);
  if (overlap <= maxOverlap) return undefined;
  const found = reported(overlap);
  return requestError(
    `This document repeats response names too often: fields that share a name in one selection set ` +
      `(fragments written inline) must be compared pair by pair; their overlap is ${found} (the square ` +
      `of the fields under each repeated name), at most ${maxOverlap} is allowed. Ask for each field once`,
    { code: 'TOO_MANY_OVERLAPPING_FIELDS', found, limit: maxOverlap },
  );
}

/** graphql-js's own entries when it stops early get our code, like every other "too many" answer. */
function withOurAbortEntries(errors: readonly GraphQLError[]): readonly GraphQLError[] {
  const last = errors.at(-1);
  if (errors.length > MAX_ERRORS && last?.message.startsWith('Too many validation errors')) {
    return [...errors.slice(0, MAX_ERRORS), tooManyErrors()];
  }
  if (last?.message !== 'Validation aborted.') return errors;
  // The overlap rule's own budget: our limits keep documents under it, this is the backstop.
  const aborted = requestError('This document is too costly to validate', { code: 'VALIDATION_ABORTED' });
  return [...errors.slice(0, -1), aborted];
}

/**
 * graphql-js 16's SingleFieldSubscriptionsRule reads `@include(if: $b)` without variable values and
 * throws: a validation error like the others (with its code), not an error without one.
 */
function thrownAsErrors(validate: () => ReadonlyArray<GraphQLError>): ReadonlyArray<GraphQLError> {
  try {
    return validate();
  } catch (error) {
    if (error instanceof GraphQLError) return [error];
    throw error;
  }
}

/**
 * Refuses documents over the limits before graphql-js's rules run, shapes worked out once per document:
 * they stand in for GraphQL Armor's depth, alias, directive and cost rules, which count a fragment
 * spread unlike the same fields inline and let introspection expand freely.
 */
const useShapeLimits = (): Plugin => ({
  onValidate({ params, setResult, setValidationFn, validateFn }) {
    for (const shape of operationShapes(params.documentAST).values()) {
      const problem = shapeProblem(shape);
      if (problem) return setResult([problem]);
    }
    const problem = validationWorkProblem(params.documentAST);
    if (problem) return setResult([problem]);
    // graphql-js stops at maxErrors and adds one "Too many validation errors" entry.
    setValidationFn((schema, document, rules, options, typeInfo) =>
      withOurAbortEntries(
        thrownAsErrors(() => validateFn(schema, document, rules, { ...options, maxErrors: MAX_ERRORS }, typeInfo)),
      ),
    );
  },
});

/** Armor's token limit counts tokens as the parser reads them; its refusal gets our code and status. */
const tokenLimit = () =>
  maxTokensPlugin({
    n: QUERY_LIMITS.tokens,
    onReject: [
      () => {
        throw requestError(
          `This document has more than ${QUERY_LIMITS.tokens} tokens; at most ${QUERY_LIMITS.tokens} are allowed`,
          { code: 'TOO_MANY_TOKENS', limit: QUERY_LIMITS.tokens },
        );
      },
    ],
  });

/** graphql-js 17's KnownOperationTypesRule: graphql-js 16 lets an unserved operation type through to throw. */
export const knownOperationTypesRule: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation)) return;
    context.reportError(
      new GraphQLError(`The ${node.operation} operation is not supported by the schema.`, { nodes: node }),
    );
  },
});

/** The limits on a client's document, size (tokens) then shape: hundreds of aliased lists would be as many scans. */
export function useQueryLimits(): Plugin[] {
  const knownOperationTypes: Plugin = {
    onValidate: ({ addValidationRule }) => addValidationRule(knownOperationTypesRule),
  };
  return [tokenLimit() as Plugin, useShapeLimits(), knownOperationTypes];
}

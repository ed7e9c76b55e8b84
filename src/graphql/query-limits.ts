import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import type { Plugin } from 'graphql-yoga';

/**
 * GraphQL Armor's defaults: a few hundred aliases of `pets(limit: 100)` in one request would be a
 * few hundred collection scans on FerretDB. Introspection (GraphiQL) stays allowed.
 */
export function useQueryLimits(): Plugin[] {
  return [
    maxAliasesPlugin({ n: 15 }),
    maxDepthPlugin({ n: 6, ignoreIntrospection: true, flattenFragments: true }),
    maxDirectivesPlugin({ n: 50 }),
    maxTokensPlugin({ n: 1000 }),
    costLimitPlugin({ maxCost: 5000, ignoreIntrospection: true }),
  ] as Plugin[];
}

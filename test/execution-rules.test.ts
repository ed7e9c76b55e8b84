import { createYoga } from 'graphql-yoga';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectDatabase, type Database } from '../src/db/mongo.ts';
import { createPublishedDocuments, type PublishedDocuments } from '../src/documents/published-documents.ts';
import { createErrorLog } from '../src/graphql/error-log.ts';
import { directStepsOf, type ExecutionRule, executionRules } from '../src/graphql/execution-rules.ts';
import { createListSizeCheck } from '../src/graphql/list-size.ts';
import { createOperationAdmission } from '../src/graphql/operation-admission.ts';
import { schema } from '../src/graphql/schema/index.ts';
import { createValidatedDocuments } from '../src/graphql/validated-documents.ts';
import { useConditionalGets } from '../src/graphql-http/conditional-gets.ts';
import { createGraphQLServer, yogaOptions } from '../src/graphql-http/yoga.ts';
import { createMetrics } from '../src/metrics/metrics.ts';
import { createMongoStores } from '../src/stores.ts';
import { uniqueDbName } from './support/test-server.ts';

/** The per-request hooks a plugin sets (`onPluginInit` runs once, when Yoga starts). */
const hooksOf = (plugin: object) =>
  Object.keys(plugin)
    .filter((hook) => hook !== 'onPluginInit')
    .sort()
    .join('+');

/** Yoga's plugins, which createYoga keeps (graphql-yoga is pinned; this test reads a protected field). */
const pluginsOf = (yoga: unknown) => (yoga as { plugins: object[] }).plugins;

/**
 * What a Yoga runs per request beyond its own plugins (those a Yoga with the same options and no
 * plugins has, matched by their hooks) and the declared rules' plugins (matched by identity).
 */
function undeclaredHooks(yoga: unknown, rules: readonly ExecutionRule[], base: ReturnType<typeof yogaOptions>) {
  const declared = new Set<object>(rules.flatMap((rule) => rule.yoga));
  const yogasOwn = pluginsOf(createYoga({ ...base, plugins: [] })).map(hooksOf);
  const extra: string[] = [];
  for (const plugin of pluginsOf(yoga)) {
    if (declared.has(plugin)) continue;
    const own = yogasOwn.indexOf(hooksOf(plugin));
    if (own >= 0) yogasOwn.splice(own, 1);
    else extra.push(hooksOf(plugin));
  }
  return extra.filter((hooks) => hooks !== '');
}

describe('the execution rules: one declaration for Yoga and the direct execution', () => {
  let database: Database;
  let documents: PublishedDocuments;
  let rules: ExecutionRule[];
  const logger = pino({ enabled: false });
  const errorLog = createErrorLog(logger);
  const createContext = () => {
    throw new Error('no operation runs here');
  };
  const base = yogaOptions({ createContext, logger, errorLog });

  beforeAll(async () => {
    database = await connectDatabase(inject('mongoUri'), uniqueDbName('rules'));
    const metrics = createMetrics();
    const stores = await createMongoStores(database, { metrics, logger });
    documents = createPublishedDocuments({ store: stores.persistedDocuments, logger });
    rules = executionRules({
      schema,
      logger,
      errorLog,
      listSizeCheck: createListSizeCheck(100),
      admission: createOperationAdmission({}),
      metrics,
      trustedDocuments: { mode: 'log', documents },
      conditionalGets: useConditionalGets(undefined),
      validatedDocuments: createValidatedDocuments(),
    });
  });

  afterAll(async () => {
    documents.stop();
    await database.db.dropDatabase();
    await database.close();
  });

  it('the service Yoga runs no per-request plugin the declaration does not name', () => {
    const yoga = createGraphQLServer({ createContext, logger, errorLog, plugins: rules.flatMap((rule) => rule.yoga) });
    expect(undeclaredHooks(yoga, rules, base)).toEqual([]);
    // Each declared plugin runs, in the declaration's order.
    const running = pluginsOf(yoga);
    const positions = rules.flatMap((rule) => rule.yoga).map((plugin) => running.indexOf(plugin));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('catches a plugin added to Yoga beside the declaration', () => {
    const yoga = createYoga({ ...base, plugins: [...rules.flatMap((rule) => rule.yoga), { onExecute() {} }] });
    expect(undeclaredHooks(yoga, rules, base)).toEqual(['onExecute']);
  });

  it('every rule either has a direct half or says why only Yoga runs it', () => {
    for (const rule of rules) {
      expect(rule.name).not.toBe('');
      if (rule.direct) expect(Object.keys(rule.direct).length).toBeGreaterThan(0);
      else expect(rule.yogaOnly?.length).toBeGreaterThan(10);
    }
    expect(directStepsOf(rules)).toHaveLength(rules.filter((rule) => rule.direct).length);
  });
});

import { buildSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { perRequestHooksOf, UnmirroredPluginError } from '../src/graphql/mirrored-plugins.ts';
import { sampleIn } from './support/metric-sample.ts';
import { AUTH, startTestServer } from './support/test-server.ts';

// REST and the GraphQL fast path run operations without Yoga's envelop: a Yoga plugin acting per
// request would act on some requests only. So the service takes, from an operator, only plugins that
// act at start, and refuses to start with any other.

const PET = 'query MirroredPet($id: ID!) { pet(id: $id) { id name } }';

async function refusal(graphqlPlugins: Plugin[]): Promise<Error> {
  const error = await startTestServer({ graphqlPlugins }).then(
    async (server) => {
      await server.close();
      throw new Error('the service started');
    },
    (refused: Error) => refused,
  );
  expect(error).toBeInstanceOf(UnmirroredPluginError);
  return error;
}

describe('when an operator adds a Yoga plugin with per-request hooks', () => {
  it('then the service refuses to start, naming the plugin and its hooks', async () => {
    const error = await refusal([{ onSchemaChange: () => {} }, { onExecute: () => {} }]);
    expect(error.message).toContain('#2 of graphqlPlugins');
    expect(error.message).toContain('(onExecute)');
  });

  it('then a named plugin with result-time hooks is refused by its name', async () => {
    const audit = { name: 'audit', onResultProcess: () => {}, onResponse: () => {} } as Plugin;
    const error = await refusal([audit]);
    expect(error.message).toContain('"audit" (#1 of graphqlPlugins)');
    expect(error.message).toContain('(onResultProcess, onResponse)');
  });

  it.each([
    ['onRequest', { onRequest: () => {} }],
    ['onParams', { onParams: () => {} }],
    ['onParse', { onParse: () => {} }],
    ['onValidate', { onValidate: () => {} }],
    ['onContextBuilding', { onContextBuilding: () => {} }],
    ['onSubscribe', { onSubscribe: () => {} }],
    ['onExecutionResult', { onExecutionResult: () => {} }],
    ['instrumentation', { instrumentation: { execute: (_payload: unknown, wrapped: () => void) => wrapped() } }],
    ['a hook this version does not know', { onSomethingNew: () => {} }],
  ])('then one with %s is refused too', async (_hook, plugin) => {
    await refusal([plugin as Plugin]);
  });

  it('then a plugin that adds a per-request plugin at start is refused', async () => {
    const adds: Plugin = { onPluginInit: ({ addPlugin }) => addPlugin({ onExecute: () => {} }) };
    const error = await refusal([adds]);
    expect(error.message).toContain('added by #1 of graphqlPlugins: #1');
  });
});

describe('when an operator adds a plugin made by a class', () => {
  class Audit {
    onPluginInit() {}
    onExecute() {}
  }
  class StrictAudit extends Audit {
    onValidate() {}
  }

  it('then hooks on its prototype are refused as own ones are, however deep', async () => {
    expect((await refusal([new Audit() as Plugin])).message).toContain('(onExecute)');
    expect((await refusal([new StrictAudit() as Plugin])).message).toContain('(onValidate, onExecute)');
  });

  it('then its start-time hooks on the prototype are all called, on the instance itself', async () => {
    // State lives outside the instance: every key a plugin carries counts as a hook.
    const calls: [string, unknown][] = [];
    class Counting {
      onPluginInit() {
        calls.push(['init', this]);
      }
      onSchemaChange() {
        calls.push(['schema', this]);
      }
    }
    const counting = new Counting();
    const server = await startTestServer({ graphqlPlugins: [counting as Plugin] });
    await server.close();
    expect(calls.filter(([hook]) => hook === 'init')).toEqual([['init', counting]]);
    expect(calls).toContainEqual(['schema', counting]);
    expect(calls.every(([, self]) => self === counting)).toBe(true);
  });
});

describe('when a start-only plugin tries to change what only Yoga would run', () => {
  const other = buildSchema('type Query { other: String }');

  it.each([
    ['replaces the schema at init', 'setSchema', { onPluginInit: ({ setSchema }) => setSchema(other) } as Plugin],
    [
      'replaces the schema on a schema change',
      'replaceSchema',
      { onSchemaChange: ({ replaceSchema }) => replaceSchema(other) } as Plugin,
    ],
    [
      'registers a context error handler',
      'registerContextErrorHandler',
      { onPluginInit: ({ registerContextErrorHandler }) => registerContextErrorHandler(() => {}) } as Plugin,
    ],
    [
      'pushes a per-request plugin into the list past addPlugin',
      'plugin list',
      { onPluginInit: ({ plugins }) => void plugins.push({ onExecute: () => {} }) } as Plugin,
    ],
  ])('then one that %s is refused, saying so', async (_what, named, plugin) => {
    const error = await refusal([{ name: 'sneaky', ...plugin } as Plugin]);
    expect(error.message).toContain('"sneaky" (#1 of graphqlPlugins)');
    expect(error.message).toContain(named);
  });
});

describe('when an operator adds a Yoga plugin that acts at start only', () => {
  it('then the service starts with it, Yoga calls it, and both paths answer alike', async () => {
    let initialised = 0;
    let schemas = 0;
    const startOnly: Plugin = {
      onPluginInit: ({ addPlugin }) => {
        initialised++;
        addPlugin({ onSchemaChange: () => void schemas++ });
      },
      onSchemaChange: () => void schemas++,
    };
    const server = await startTestServer({ graphqlPlugins: [startOnly] });
    try {
      expect(initialised).toBe(1);
      expect(schemas).toBeGreaterThan(0);
      const send = () =>
        server.request
          .post('/graphql')
          .set(AUTH)
          .send({ query: PET, variables: { id: '1' } });
      const fastPath = async () => sampleIn(await server.metrics.scrape.text(), 'graphql_fast_path_requests_total');
      const before = await fastPath();
      const [first, second] = [await send(), await send()];
      expect(await fastPath()).toBe(before + 1);
      expect(first.status).toBe(200);
      expect(second.body).toEqual(first.body);
    } finally {
      await server.close();
    }
  });
});

describe('perRequestHooksOf', () => {
  it('lists every key but the start-time hooks and a name, symbols included', () => {
    const hook = Symbol('hook');
    const plugin = { name: 'x', onPluginInit() {}, onDispose() {}, onExecute() {}, [hook]: () => {} };
    expect(perRequestHooksOf(plugin)).toEqual(['onExecute', 'Symbol(hook)']);
    expect(perRequestHooksOf({ onExecute: undefined, onSchemaChange() {} })).toEqual([]);
  });

  it('reads inherited keys too, but neither a constructor nor what every object inherits', () => {
    class Base {
      onParse() {}
    }
    class Derived extends Base {
      onPluginInit() {}
    }
    expect(perRequestHooksOf(new Derived())).toEqual(['onParse']);
    expect(perRequestHooksOf(Object.create(null))).toEqual([]);
    expect(perRequestHooksOf(Object.create({ onResponse() {} }))).toEqual(['onResponse']);
  });
});

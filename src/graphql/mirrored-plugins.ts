import type { Plugin } from 'graphql-yoga';

/**
 * Hooks Yoga calls at start, on a schema change or at disposal, never per request: a plugin with
 * only these acts the same whichever path answers. Any other key (onRequest, onParams, onParse,
 * onValidate, onContextBuilding, onExecute, onSubscribe, onExecutionResult, onResultProcess,
 * onResponse, instrumentation, and hooks of future versions) counts as per request.
 */
const START_TIME_HOOKS: ReadonlySet<PropertyKey> = new Set([
  'onPluginInit',
  'onYogaInit',
  'onSchemaChange',
  'onDispose',
  Symbol.dispose,
  Symbol.asyncDispose,
]);

/** A Yoga plugin with hooks the direct execution (REST and the GraphQL fast path) would skip. */
export class UnmirroredPluginError extends Error {
  constructor(plugin: string, hooks: readonly string[]) {
    super(
      `GraphQL plugin ${plugin} has per-request hooks (${hooks.join(', ')}) that REST and the GraphQL fast path ` +
        'would not run: only plugins acting at start (onPluginInit, onYogaInit, onSchemaChange, onDispose) may be added',
    );
    this.name = 'UnmirroredPluginError';
  }
}

/** The hooks of a plugin that Yoga would call per request. */
export function perRequestHooksOf(plugin: object): string[] {
  const hooks = Reflect.ownKeys(plugin).filter(
    (key) => key !== 'name' && !START_TIME_HOOKS.has(key) && (plugin as Record<PropertyKey, unknown>)[key] != null,
  );
  return hooks.map(String);
}

/** The plugin's name for an error: its own `name` if it has one, else its place in the list. */
const nameOf = (plugin: object, place: string) => {
  const own = (plugin as { name?: unknown }).name;
  return typeof own === 'string' && own !== '' ? `"${own}" (${place})` : place;
};

/**
 * The plugin, checked, and with an onPluginInit whose addPlugin checks what it adds: a plugin may
 * add another at start, which must act at start only too. Throws UnmirroredPluginError.
 */
function checked(plugin: Plugin, place: string): Plugin {
  const hooks = perRequestHooksOf(plugin);
  if (hooks.length > 0) throw new UnmirroredPluginError(nameOf(plugin, place), hooks);
  const { onPluginInit } = plugin;
  if (!onPluginInit) return plugin;
  let added = 0;
  return {
    ...plugin,
    onPluginInit(payload) {
      const addPlugin = (extra: Plugin) => payload.addPlugin(checked(extra, `added by ${place}: #${++added}`));
      return onPluginInit.call(plugin, { ...payload, addPlugin } as typeof payload);
    },
  };
}

/**
 * Yoga's plugin list: `mirrored`, the plugins whose every per-request hook the direct execution
 * applies too (each says how in yoga.ts), then `added`, plugins an operator adds, which must act at
 * start only. Yoga calls onPluginInit while it is created, so createService throws there.
 */
export function pluginsForBothPaths<Mirrored extends object>(
  mirrored: readonly Mirrored[],
  added: readonly Plugin[],
): (Mirrored | Plugin)[] {
  return [...mirrored, ...added.map((plugin, index) => checked(plugin, `#${index + 1} of graphqlPlugins`))];
}

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

/** Keys that are no hook: the plugin's name, and a class's constructor on its prototype. */
const NOT_HOOKS: ReadonlySet<PropertyKey> = new Set(['name', 'constructor']);

/** A Yoga plugin that would make Yoga act differently from the direct execution (REST and the GraphQL fast path). */
export class UnmirroredPluginError extends Error {
  constructor(plugin: string, problem: string) {
    super(
      `GraphQL plugin ${plugin} ${problem}, which REST and the GraphQL fast path would not follow: only plugins ` +
        'acting at start (onPluginInit, onYogaInit, onSchemaChange, onDispose) that leave the schema as it is may be added',
    );
    this.name = 'UnmirroredPluginError';
  }
}

/**
 * Every key Yoga and envelop can read on the plugin, its prototypes' included (a class's methods):
 * they read hooks as properties, own or inherited. Object.prototype holds no hook.
 */
function reachableKeys(plugin: object): Set<PropertyKey> {
  const keys = new Set<PropertyKey>();
  for (let level: object | null = plugin; level !== null && level !== Object.prototype; ) {
    for (const key of Reflect.ownKeys(level)) keys.add(key);
    level = Object.getPrototypeOf(level) as object | null;
  }
  return keys;
}

/** The hooks of a plugin that Yoga would call per request. */
export function perRequestHooksOf(plugin: object): string[] {
  const read = plugin as Record<PropertyKey, unknown>;
  const hooks = [...reachableKeys(plugin)].filter(
    (key) => !NOT_HOOKS.has(key) && !START_TIME_HOOKS.has(key) && read[key] != null,
  );
  return hooks.map(String);
}

/** The plugin's name for an error: its `name` if it has one, else its place in the list. */
const nameOf = (plugin: object, place: string) => {
  const own = (plugin as { name?: unknown }).name;
  return typeof own === 'string' && own !== '' ? `"${own}" (${place})` : place;
};

type Hook = (payload: unknown) => unknown;
type PluginInitPayload = Parameters<NonNullable<Plugin['onPluginInit']>>[0];
type SchemaChangePayload = Parameters<NonNullable<Plugin['onSchemaChange']>>[0];

/**
 * The payloads a checked plugin's start-time hooks get: what would change Yoga alone is refused (a
 * replaced schema, a context error handler, a plugin pushed past addPlugin), what it adds is checked.
 */
function guardedPayloads(name: string, place: string) {
  const refuse = (problem: string) => (): never => {
    throw new UnmirroredPluginError(name, problem);
  };
  const changesList = refuse("changes Yoga's plugin list other than by addPlugin");
  let added = 0;
  return {
    pluginInit: (payload: PluginInitPayload): PluginInitPayload => ({
      plugins: new Proxy([...payload.plugins], {
        set: changesList,
        defineProperty: changesList,
        deleteProperty: changesList,
      }),
      addPlugin: (extra) => payload.addPlugin(checked(extra, `added by ${place}: #${++added}`)),
      setSchema: refuse("replaces Yoga's schema (setSchema)"),
      registerContextErrorHandler: refuse('registers a context error handler (registerContextErrorHandler)'),
    }),
    schemaChange: ({ schema }: SchemaChangePayload): SchemaChangePayload => ({
      schema,
      replaceSchema: refuse("replaces Yoga's schema (replaceSchema)"),
    }),
  };
}

/**
 * The plugin, checked, as a plain object of its start-time hooks (own or inherited, called on the
 * plugin itself) with guarded payloads. Throws UnmirroredPluginError.
 */
function checked(plugin: Plugin, place: string): Plugin {
  const name = nameOf(plugin, place);
  const hooks = perRequestHooksOf(plugin);
  if (hooks.length > 0) throw new UnmirroredPluginError(name, `has per-request hooks (${hooks.join(', ')})`);
  const read = plugin as Record<PropertyKey, unknown>;
  const startOnly: Record<PropertyKey, unknown> = typeof read.name === 'string' ? { name: read.name } : {};
  for (const key of START_TIME_HOOKS) {
    const hook = read[key];
    if (hook != null) startOnly[key] = typeof hook === 'function' ? hook.bind(plugin) : hook;
  }
  const payloads = guardedPayloads(name, place);
  const { onPluginInit, onSchemaChange } = startOnly as { onPluginInit?: Hook; onSchemaChange?: Hook };
  if (typeof onPluginInit === 'function') {
    startOnly.onPluginInit = (payload: PluginInitPayload) => onPluginInit(payloads.pluginInit(payload));
  }
  if (typeof onSchemaChange === 'function') {
    startOnly.onSchemaChange = (payload: SchemaChangePayload) => onSchemaChange(payloads.schemaChange(payload));
  }
  return startOnly as Plugin;
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

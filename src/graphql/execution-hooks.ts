import type { Plugin } from 'graphql-yoga';

/**
 * What a plugin's onExecute may return: its onExecuteDone hook. Plugins build theirs once and return
 * the same object every time (the hook gets the execution's args), not a new closure per request.
 */
export type ExecutionHooks = Exclude<Awaited<ReturnType<NonNullable<Plugin['onExecute']>>>, void>;

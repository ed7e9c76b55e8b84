import type { Plugin } from 'graphql-yoga';

/**
 * `/health` says the process is up; `/ready` also asks the database, so a load balancer stops
 * sending traffic to an instance that would answer 503 to everything.
 */
export function useReadinessCheck(options: { path: string; check: () => Promise<void> }): Plugin {
  return {
    // Not async: every request passes this hook, and only /ready should pay for a promise.
    onRequest({ url, endResponse }) {
      if (url.pathname !== options.path) return;
      return options.check().then(
        () => endResponse(Response.json({ status: 'ready' })),
        () => endResponse(Response.json({ status: 'unavailable' }, { status: 503, headers: { 'Retry-After': '5' } })),
      );
    },
  };
}

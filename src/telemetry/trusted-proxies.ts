import { type ClientAddress, clientAddressOf, trustedProxyProblem } from '../edge/client-address.ts';

/**
 * The client-address rule of TRUST_PROXY for spans, read as config.ts reads it (a comma list, blank
 * meaning unset). Not through config.ts: it loads the MongoDB driver, which must load after the
 * instrumentations. A list config.ts refuses stops main.ts before any request; until then no header is believed.
 */
export function clientAddressFromEnvironment(env: NodeJS.ProcessEnv): ClientAddress {
  const entries = (env.TRUST_PROXY ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const valid = entries.every((entry) => trustedProxyProblem(entry) === undefined);
  return clientAddressOf(valid ? entries : []);
}

import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/** The address a request came from, as the failed-authentication limit counts it. */
export type ClientAddress = (req: IncomingMessage) => string;

/**
 * Without trusted proxies, the socket's peer: X-Forwarded-For is anyone's to write. With them
 * (TRUST_PROXY), the nearest address in X-Forwarded-For that is not one of them, as Express's
 * `trust proxy` computes `req.ip` (proxy-addr): behind a balancer every socket is the balancer's, and
 * one client's failed keys would otherwise lock out every client.
 */
export function clientAddressOf(trustedProxies: readonly string[]): ClientAddress {
  if (trustedProxies.length === 0) return (req) => req.socket.remoteAddress ?? '';
  const trusted = proxyaddr.compile([...trustedProxies]);
  return (req) => (req.socket.remoteAddress ? proxyaddr(req, trusted) : '');
}

/** Why `entry` cannot name trusted proxies (undefined when it can): an address, a CIDR range or a name. */
export function trustedProxyProblem(entry: string): string | undefined {
  try {
    proxyaddr.compile(entry);
    return undefined;
  } catch (error) {
    return `${(error as Error).message} (expected an IP address, a CIDR range, loopback, linklocal or uniquelocal)`;
  }
}

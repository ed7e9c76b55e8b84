import type { IncomingMessage } from 'node:http';

// 127.0.0.0/8, written as a dotted quad of decimal octets.
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4_LOOPBACK = `127(?:\\.${OCTET}){3}`;
const LOOPBACK_ADDRESS = new RegExp(`^(?:localhost|${IPV4_LOOPBACK}|::1)$`, 'i');
const LOOPBACK_HOST_HEADER = new RegExp(`^(?:localhost|${IPV4_LOOPBACK}|\\[::1\\])(?::\\d{1,5})?$`, 'i');

/** Headers a proxy adds; a browser on this machine sends none of them. */
const PROXY_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip', 'via'] as const;

/** Whether HOST makes the service listen where only this machine can connect. */
export const isLoopbackAddress = (host: string) => LOOPBACK_ADDRESS.test(host);

/**
 * Whether a request for a page came from a browser on this machine that asked for it by a loopback
 * name. A page for any other Host is one DNS rebinding or a reverse proxy on this host could serve
 * to others. A proxy that rewrites Host to the upstream's (nginx's default, Apache's) still leaves a
 * mark: a forwarding header, or nginx's HTTP/1.0, which browsers no longer send.
 */
export function isLocalBrowserRequest(req: IncomingMessage): boolean {
  if (!LOOPBACK_HOST_HEADER.test(req.headers.host ?? '')) return false;
  if (req.httpVersion === '1.0') return false;
  return PROXY_HEADERS.every((name) => req.headers[name] === undefined);
}

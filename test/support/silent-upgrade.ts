// WebSocket upgrades as an attacker holds them: a raw TCP socket that asks for the upgrade, then never
// sends a frame, not even the answer to the server's close frame. No WebSocket library in between.
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

const ANSWER_WAIT_MS = 5_000;

export interface SilentUpgrade {
  /** The upgrade's status: 101, or the refusal's. */
  status: number;
  /** The answer's header fields, names in lower case. */
  headers: Record<string, string>;
  /** Settles when the server (or `destroy`) closes the connection: how long it was open, in ms. */
  closed: Promise<number>;
  destroy(): void;
}

export interface SilentUpgradeOptions {
  /** The local address to connect from (`127.0.0.2`: another client on this machine). */
  localAddress?: string;
  headers?: Record<string, string>;
}

function headerFieldsOf(head: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return fields;
}

function upgradeRequest(url: URL, headers: Record<string, string>): string {
  const lines = [
    'GET /graphql HTTP/1.1',
    `Host: ${url.host}`,
    'Connection: Upgrade',
    'Upgrade: websocket',
    'Sec-WebSocket-Version: 13',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    'Sec-WebSocket-Protocol: graphql-transport-ws',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Asks for the upgrade and reads its answer's head; what follows (a close frame) is read and ignored. */
export function silentUpgrade(baseUrl: string, options: SilentUpgradeOptions = {}): Promise<SilentUpgrade> {
  const url = new URL(baseUrl);
  const socket: Socket = connect({
    host: url.hostname,
    port: Number(url.port),
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  });
  const openedAt = performance.now();
  const closed = new Promise<number>((done) => socket.once('close', () => done(performance.now() - openedAt)));
  socket.on('error', () => socket.destroy());
  let received = '';
  return new Promise<SilentUpgrade>((answered, failed) => {
    const timer = setTimeout(() => {
      socket.destroy();
      failed(new Error(`no answer to the upgrade within ${ANSWER_WAIT_MS} ms`));
    }, ANSWER_WAIT_MS);
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      clearTimeout(timer);
      const head = received.slice(0, end);
      const status = Number(head.split(' ', 2)[1]);
      // Keep reading (and ignoring): a peer that reads but never answers, as a script would.
      socket.off('data', onData);
      socket.on('data', () => {});
      answered({ status, headers: headerFieldsOf(head), closed, destroy: () => socket.destroy() });
    };
    socket.on('data', onData);
    socket.once('close', () => {
      clearTimeout(timer);
      failed(new Error(`the connection closed before the upgrade was answered: ${JSON.stringify(received)}`));
    });
    socket.write(upgradeRequest(url, options.headers ?? {}));
  });
}

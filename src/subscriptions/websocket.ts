import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { KeyGone } from '../http/stream-outcomes.ts';
import { instanceRefusal, type UpgradeAdmission } from './websocket-admission.ts';
import type { WebSocketTransport as Transport, TransportOptions } from './websocket-server.ts';

/**
 * GraphQL over WebSocket (graphql-transport-ws) on /graphql, beside SSE: node:http's `upgrade`, once
 * the admission (path, origin, per-address shares) let it in, served by graphql-ws (websocket-server.ts).
 */
export function createWebSockets(options: TransportOptions & { admission: UpgradeAdmission }) {
  const { admission } = options;
  let closing = false;
  let closed: Promise<void> | undefined;
  // ws and graphql-ws are loaded on the first upgrade: an instance that never sees one does not hold them.
  let transport: Promise<Transport> | undefined;
  return {
    upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
      socket.on('error', () => socket.destroy());
      void admission.admit(req, socket).then(async (admitted) => {
        if (!admitted) return;
        transport ??= import('./websocket-server.ts').then((loaded) => new loaded.WebSocketTransport(options));
        const loaded = await transport;
        const refused = instanceRefusal(closing, loaded.full());
        if (refused) return admission.refuse(req, socket, refused, admitted);
        loaded.wss.handleUpgrade(req, socket, head, (ws) => {
          admitted.opened(ws);
          loaded.serve(ws, req, admitted.release);
        });
      });
    },
    /** The key was revoked or expired: its connections close with 4401 (their streams end with them). */
    endKey: (keyId: string, why: KeyGone) => void transport?.then((loaded) => loaded.endKey(keyId, why)),
    /** The instance is stopping: new sockets are refused, every socket closes with 1001; settles when none is left. */
    close: (): Promise<void> =>
      (closed ??= (async () => {
        closing = true;
        await (await transport)?.goAway();
      })()),
  };
}

export type WebSockets = ReturnType<typeof createWebSockets>;

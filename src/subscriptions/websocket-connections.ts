import type { WebSocket } from 'ws';
import type { KeyGone } from '../http/stream-outcomes.ts';
import { CloseCode, endSocket, onSocketEnd } from './websocket-close.ts';

export interface ConnectionLimits {
  /** Acknowledged connections one API key may hold on this instance (MAX_SUBSCRIPTIONS_PER_KEY). */
  maxPerKey: number;
  /** Open sockets on this instance, acknowledged or not (MAX_SUBSCRIPTIONS). */
  maxTotal: number;
}

/** Why an acknowledged connection is refused: the key holds its limit of them already. */
export const tooManyForKey = (maxPerKey: number) =>
  `Too many WebSocket connections for this API key (${maxPerKey} on this instance): send several operations over one`;

/**
 * The GraphQL WebSockets of this instance, counted: all of them, and the acknowledged ones per key,
 * so that neither a key nor the instance holds sockets without bound (the ones not yet acknowledged
 * are websocket-admission.ts's). A socket stops counting as the server closes it.
 */
export function createConnectionCounts({ maxPerKey, maxTotal }: ConnectionLimits) {
  const all = new Set<WebSocket>();
  const perKey = new Map<string, Set<WebSocket>>();
  const keyOf = new Map<WebSocket, string>();

  function forget(socket: WebSocket): void {
    all.delete(socket);
    const keyId = keyOf.get(socket);
    if (keyId === undefined) return;
    keyOf.delete(socket);
    const sockets = perKey.get(keyId);
    if (sockets?.delete(socket) && sockets.size === 0) perKey.delete(keyId);
  }

  return {
    /** Whether another upgrade is taken: none past the instance's sockets (503). */
    full: () => all.size >= maxTotal,
    /** A socket was opened: it waits for its `connection_init`. */
    opened(socket: WebSocket): void {
      all.add(socket);
      onSocketEnd(socket, () => forget(socket));
    },
    /** `keyId` authenticated the socket: true when the key may hold one more connection. */
    acknowledge(socket: WebSocket, keyId: string): boolean {
      const sockets = perKey.get(keyId) ?? new Set<WebSocket>();
      if (sockets.size >= maxPerKey || !all.has(socket)) return false;
      sockets.add(socket);
      perKey.set(keyId, sockets);
      keyOf.set(socket, keyId);
      return true;
    },
    /** The key is no longer valid: each of its connections closes with 4401 (final for graphql-ws clients). */
    endKey(keyId: string, why: KeyGone): void {
      const reason = why === 'expired' ? 'The API key expired' : 'The API key was revoked';
      for (const socket of [...(perKey.get(keyId) ?? [])]) endSocket(socket, CloseCode.Unauthorized, reason);
    },
  };
}

export type ConnectionCounts = ReturnType<typeof createConnectionCounts>;

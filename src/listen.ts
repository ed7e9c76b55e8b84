import type { RequestListener, Server } from 'node:http';
import { createHttpServer } from './http/server.ts';
import { listenRefusal, StartRefusedError } from './start-refusal.ts';

export interface ServerOptions {
  keepAliveTimeoutMs: number;
  /** A server error once listening (`where` is host:port): the caller stops the service. */
  onError: (error: Error, where: string) => void;
}

export interface ListenOn {
  host: string;
  port: number;
  /** The variables that set them, named when the user must change one. */
  variables: { host: string; port: string };
}

/**
 * Listens on host:port and resolves with the server and its origin. A port in use or forbidden, an
 * address this machine does not have or a name that does not resolve rejects with a StartRefusedError
 * saying which variable to change.
 */
export function listen(
  listener: RequestListener,
  { keepAliveTimeoutMs, onError }: ServerOptions,
  { host, port, variables }: ListenOn,
): Promise<{ http: Server; origin: string }> {
  const http = createHttpServer(listener, { keepAliveTimeoutMs });
  return new Promise((listening, failed) => {
    const refused = (error: NodeJS.ErrnoException) => {
      const refusal = listenRefusal(error.code, variables);
      failed(refusal ? new StartRefusedError(`cannot listen on ${host}:${port}: ${refusal}`) : error);
    };
    http.once('error', refused);
    http.listen(port, host, () => {
      http.off('error', refused);
      http.on('error', (error) => onError(error, `${host}:${port}`));
      const address = http.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      listening({ http, origin: `http://${host.includes(':') ? `[${host}]` : host}:${bound}` });
    });
  });
}

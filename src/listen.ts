import type { RequestListener, Server } from 'node:http';
import { createHttpServer } from './http/server.ts';
import { StartRefusedError } from './start-refusal.ts';

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

/** Why a listen failed, when it is the user's to fix; undefined for anything unexpected. */
function listenRefusal(code: string | undefined, variables: ListenOn['variables']): string | undefined {
  switch (code) {
    case 'EADDRINUSE':
      return `another process listens there: stop it, or set ${variables.port} to another port`;
    case 'EACCES':
      return `this user may not listen there (ports below 1024 need privileges): set ${variables.port} to another port`;
    case 'EADDRNOTAVAIL':
      return `no network interface of this machine has that address: check ${variables.host}`;
    case 'ENOTFOUND':
      return `that host name resolves to no address (a typo?): check ${variables.host}`;
    case 'EAI_AGAIN':
      return `that host name could not be resolved now (the name server did not answer): check ${variables.host}, or set it to an IP address`;
    default:
      return undefined;
  }
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

import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { sendJson } from './send-json.ts';

/** Which body shape an error takes: a GraphQL response on /graphql, the contract's Error body elsewhere. */
export type Face = 'graphql' | 'rest';

/** An error as every answer carries it: the contract's code, its one status, a message for people. */
export interface HttpError {
  status: number;
  code: string;
  message: string;
  /** Headers the error itself needs (`Allow`, `Retry-After`, `Connection: close`). */
  headers?: Readonly<Record<string, string>>;
}

/** The service's one writer of error answers, for every face, route and page; errors are never cached. */
export function sendError(res: ServerResponse, face: Face, error: HttpError, headers?: OutgoingHttpHeaders): void {
  const body =
    face === 'graphql'
      ? { errors: [{ message: error.message, extensions: { code: error.code } }] }
      : { code: error.code, message: error.message, status: error.status };
  sendJson(res, error.status, body, { ...error.headers, ...headers, 'Cache-Control': 'no-store' });
}

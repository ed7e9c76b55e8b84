import type { IncomingMessage } from 'node:http';
import contentType from 'content-type';
import { BodyTooLargeError, readBody } from '../http/read-body.ts';
import { RestError } from './http-errors.ts';

/** What nearly every client sends: accepted without parsing it again on every request. */
const PLAIN_JSON = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);
/** A Content-Type quoted in a message is cut here: an answer must not grow with a request header. */
const QUOTED_HEADER_MAX = 64;
const quoted = (header: string) =>
  JSON.stringify(header.length > QUOTED_HEADER_MAX ? `${header.slice(0, QUOTED_HEADER_MAX)}…` : header);

/** Stateless between calls (no streaming), so one serves every request. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function assertJsonContentType(header: string | undefined): void {
  if (header !== undefined && PLAIN_JSON.has(header)) return;
  if (!header) throw new RestError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as Content-Type: application/json');
  let parsed: contentType.ParsedMediaType;
  try {
    parsed = contentType.parse(header);
  } catch {
    throw new RestError('UNSUPPORTED_MEDIA_TYPE', `Content-Type ${quoted(header)} is malformed; use application/json`);
  }
  const charset = parsed.parameters.charset?.toLowerCase();
  if (parsed.type !== 'application/json' || (charset !== undefined && charset !== 'utf-8')) {
    throw new RestError(
      'UNSUPPORTED_MEDIA_TYPE',
      `Content-Type ${quoted(header)} is not supported; use application/json`,
    );
  }
}

/** The request's JSON body: 415 for another media type, 413 past the limit, 400 when not JSON. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  assertJsonContentType(req.headers['content-type']);
  const bytes = await readBody(req, maxBytes).catch((error: unknown) => {
    if (!(error instanceof BodyTooLargeError)) throw error;
    // The rest of the body stays unread on the socket, so it cannot carry another request: close it.
    throw new RestError('PAYLOAD_TOO_LARGE', error.message, { Connection: 'close' });
  });
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new RestError('INVALID_JSON', 'The request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RestError('INVALID_JSON', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

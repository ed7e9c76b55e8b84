import type { IncomingMessage } from 'node:http';
import contentType from 'content-type';
import { RestError } from './http-errors.ts';

function assertJsonContentType(header: string | undefined): void {
  if (!header) throw new RestError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as Content-Type: application/json');
  let parsed: contentType.ParsedMediaType;
  try {
    parsed = contentType.parse(header);
  } catch {
    throw new RestError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "${header}" is malformed; use application/json`);
  }
  const charset = parsed.parameters.charset?.toLowerCase();
  if (parsed.type !== 'application/json' || (charset !== undefined && charset !== 'utf-8')) {
    throw new RestError('UNSUPPORTED_MEDIA_TYPE', `Content-Type "${header}" is not supported; use application/json`);
  }
}

function tooLarge(maxBytes: number): RestError {
  // The rest of the body stays unread on the socket, so it cannot carry another request: close it.
  return new RestError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes`, { Connection: 'close' });
}

/**
 * Reads at most maxBytes, so an oversized or endless body costs us no more than that. Past the limit
 * we stop listening but do not destroy the socket: that would cut the 413 before it is sent.
 */
function readBounded(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  if (Number(req.headers['content-length'] ?? '0') > maxBytes) return Promise.reject(tooLarge(maxBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total <= maxBytes) return void chunks.push(chunk);
      cleanup();
      req.pause();
      reject(tooLarge(maxBytes));
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    // A client that goes away mid-body ends the wait too: every wait has an end.
    const onClose = () => onError(new Error('the client closed the request before sending its body'));
    const cleanup = () => {
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** The request's JSON body: 415 for another media type, 413 past the limit, 400 when not JSON. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  assertJsonContentType(req.headers['content-type']);
  const bytes = await readBounded(req, maxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new RestError('INVALID_JSON', 'The request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new RestError('INVALID_JSON', `The request body is not valid JSON: ${(error as Error).message}`);
  }
}

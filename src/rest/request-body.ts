import contentType from 'content-type';
import { RestError } from './http-errors.ts';

function assertJsonContentType(header: string | null): void {
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
 * we stop reading but do not cancel the stream: cancelling destroys the socket before the 413 is sent.
 */
async function readBounded(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      reader.releaseLock();
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The request's JSON body: 415 for another media type, 413 past the limit, 400 when not JSON. */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  assertJsonContentType(request.headers.get('content-type'));
  const bytes = await readBounded(request, maxBytes);
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

/** One server-sent event as GraphQL over SSE uses it: `next` (data: a GraphQL result) or `complete`. */
export interface SseFrame {
  event: string;
  data: string;
}

/** A frame larger than this is an error: a pet event is a few hundred characters. */
export const MAX_FRAME_CHARS = 64 * 1024;

/** The event and the data lines of one frame; comments (the service's pings) and empty frames are none. */
function frameOf(block: string): SseFrame | undefined {
  let event = '';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (event === '' && data.length === 0) return undefined;
  return { event: event || 'message', data: data.join('\n') };
}

/**
 * The frames of a `text/event-stream` body, read as they arrive. What is held is at most one
 * unfinished frame of `maxFrameChars`, so a server (or a proxy) that never ends a frame costs bounded
 * memory and gets a RangeError. Carriage returns are dropped: CRLF line ends read as LF (GraphQL
 * results are JSON, which escapes them). Leaving the iteration cancels the body.
 */
export async function* sseFrames(
  body: ReadableStream<Uint8Array>,
  maxFrameChars = MAX_FRAME_CHARS,
): AsyncGenerator<SseFrame, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let scanned = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replaceAll('\r', '');
      // Each character is scanned once (plus one for a separator split across chunks).
      for (let end = buffer.indexOf('\n\n', scanned); end !== -1; end = buffer.indexOf('\n\n')) {
        if (end > maxFrameChars) break;
        const frame = frameOf(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (frame) yield frame;
      }
      if (buffer.length > maxFrameChars) throw new RangeError(`an event over ${maxFrameChars} characters`);
      scanned = Math.max(0, buffer.length - 1);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

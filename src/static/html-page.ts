import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { matchesIfNoneMatch } from './static-assets.ts';

export interface HtmlPage {
  etag: string;
  send(req: IncomingMessage, res: ServerResponse): void;
}

// The pages load nothing but our own files: this makes "no CDN" a browser-enforced rule. Styles stay
// inline-capable because GraphiQL, Monaco and Swagger UI all set style attributes at run time.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "worker-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] as string);

/** JSON safe inside <script type="application/json">: no `</script>` can end the element early. */
export const jsonForScript = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

/**
 * A fixed HTML document: revalidated on every load (no-cache) and answered 304 while unchanged; a
 * page holding a secret says `no-store` instead.
 */
export function createHtmlPage(html: string, { cacheControl = 'no-cache' } = {}): HtmlPage {
  const body = Buffer.from(html);
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 24)}"`;
  const headers = {
    ETag: etag,
    'Cache-Control': cacheControl,
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
  };
  return {
    etag,
    // The edge hands pages GET and HEAD only: other methods got their 405 there.
    send(req, res) {
      if (matchesIfNoneMatch(req, etag)) {
        res.writeHead(304, headers).end();
        return;
      }
      res.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': body.length });
      res.end(req.method === 'HEAD' ? undefined : body);
    },
  };
}

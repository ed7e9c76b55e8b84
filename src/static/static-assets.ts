import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import sirv from 'sirv';
import { sendError } from '../http/send-json.ts';
import {
  type AssetFile,
  type ContentCoding,
  ENCODING_SUFFIX,
  type MountedManifest,
  readAssetManifest,
} from './asset-manifest.ts';

/** Hashed names change with their content, so a browser may keep every file for good. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

const CONTENT_TYPES_SIRV_LACKS = new Map([['.ico', 'image/x-icon']]);

/**
 * Serves `npm run build`'s files under urlPrefix: encoding and conditional requests by the manifest's
 * strong ETags (sirv's are weak and it ignores q=0); sirv streams the chosen file, with ranges.
 */
export function createStaticAssets(options: { dir: string; urlPrefix: string }) {
  const urlPrefix = options.urlPrefix.replace(/\/+$/, '');
  const manifest: MountedManifest = { ...readAssetManifest(options.dir), urlPrefix };
  const serveFile = sirv(options.dir, { dev: false, etag: false, gzip: false, brotli: false, extensions: [] });

  const notFound = (res: ServerResponse, path: string) =>
    sendError(res, 'rest', { status: 404, code: 'ROUTE_NOT_FOUND', message: `No asset at ${path}` });

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] as string;
    const fileName = path.startsWith(`${urlPrefix}/`) ? path.slice(urlPrefix.length + 1) : '';
    // Own properties only: `constructor` or `__proto__` is a name a client may send, not a file.
    const file = Object.hasOwn(manifest.files, fileName) ? manifest.files[fileName] : undefined;
    if (!file) {
      notFound(res, path);
      return;
    }
    const coding = preferredEncoding(req.headers['accept-encoding'], file);
    const variant = file[coding] ?? file.identity;
    res.setHeader('ETag', variant.etag);
    res.setHeader('Cache-Control', IMMUTABLE);
    if (file.br || file.gzip) res.setHeader('Vary', 'Accept-Encoding');
    if (matchesIfNoneMatch(req, variant.etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    const contentType = CONTENT_TYPES_SIRV_LACKS.get(fileName.slice(fileName.lastIndexOf('.')));
    if (contentType) res.setHeader('Content-Type', contentType);
    // sirv reads only url and headers; a stand-in request names the variant without touching req.url,
    // which the access log still reads when the response finishes.
    const variantRequest = { url: `/${fileName}${ENCODING_SUFFIX[coding]}`, headers: req.headers } as IncomingMessage;
    // sirv pipes a file stream into the response; pipe() leaves its source open when the client
    // leaves, so each hung-up download would keep a file descriptor for good.
    res.once('pipe', (source: Readable) => res.once('close', () => source.destroy()));
    serveFile(variantRequest, res, () => notFound(res, path));
  }

  return { manifest, handle };
}

export type StaticAssets = ReturnType<typeof createStaticAssets>;

/** RFC 9110 §13.1.2: If-None-Match compares weakly, and `*` matches any current representation. */
export function matchesIfNoneMatch(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (!header) return false;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === opaque;
  });
}

/** br over gzip over identity, honouring `q=0` (sirv's own choice only looks for the substring). */
export function preferredEncoding(acceptEncoding: string | undefined, file: AssetFile): ContentCoding {
  const weights = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (!coding) continue;
    const q = params.map((param) => param.trim()).find((param) => param.startsWith('q='));
    weights.set(coding, q ? Number(q.slice(2)) : 1);
  }
  // NaN from a malformed q fails the comparison, which is the safe reading.
  const accepts = (coding: string) => (weights.get(coding) ?? weights.get('*') ?? 0) > 0;
  if (file.br && accepts('br')) return 'br';
  if (file.gzip && (accepts('gzip') || accepts('x-gzip'))) return 'gzip';
  return 'identity';
}

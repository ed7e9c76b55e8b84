import type { IncomingMessage } from 'node:http';
import type { AssetFile, ContentCoding } from './asset-manifest.ts';

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

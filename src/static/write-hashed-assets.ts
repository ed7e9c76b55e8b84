import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { type AssetFile, type AssetManifest, ENCODING_SUFFIX } from './asset-manifest.ts';

export interface AssetSource {
  /** Logical name, kept in the hashed name: `graphiql.js` becomes `graphiql.3f2a9c1b.js`. */
  name: string;
  content: Buffer;
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

// The highest quality: slow to build, but built once and served forever (docs/benchmarks.md).
// zlib's async calls run on the libuv pool, so files compress in parallel.
const BROTLI_QUALITY = 11;
// A variant that saves less than this is not worth a second representation (PNGs, for instance).
const MIN_SAVING = 0.05;

const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function hashedName(name: string, content: Buffer): string {
  const dot = name.lastIndexOf('.');
  return `${name.slice(0, dot)}.${digest(content).slice(0, 8)}${name.slice(dot)}`;
}

async function compressed(content: Buffer): Promise<Record<'br' | 'gzip', Buffer>> {
  const [br, gzip] = await Promise.all([
    brotli(content, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: content.length,
      },
    }),
    gzipAsync(content, { level: 9 }),
  ]);
  return { br, gzip };
}

async function writeAsset(dir: string, { name, content }: AssetSource) {
  const fileName = hashedName(name, content);
  const variants: Record<string, Buffer> = { identity: content };
  for (const [coding, bytes] of Object.entries(await compressed(content))) {
    if (bytes.length <= content.length * (1 - MIN_SAVING)) variants[coding] = bytes;
  }
  const entry: Partial<AssetFile> = {};
  for (const [coding, bytes] of Object.entries(variants) as [keyof AssetFile, Buffer][]) {
    await writeFile(join(dir, fileName + ENCODING_SUFFIX[coding]), bytes);
    entry[coding] = { etag: `"${digest(bytes).slice(0, 24)}"`, bytes: bytes.length };
  }
  return { name, fileName, entry: entry as AssetFile };
}

/** Writes each source under its content-hashed name, with .br and .gz beside it where they pay. */
export async function writeHashedAssets(
  dir: string,
  sources: readonly AssetSource[],
): Promise<Pick<AssetManifest, 'assets' | 'files'>> {
  // Largest first, so the long brotli job takes a pool thread at once instead of last.
  const bySize = [...sources].sort((a, b) => b.content.length - a.content.length);
  const assets: Record<string, string> = {};
  const files: Record<string, AssetFile> = {};
  // Promise.all keeps input order, so equal inputs give an equal manifest whatever finishes first.
  for (const { name, fileName, entry } of await Promise.all(bySize.map((source) => writeAsset(dir, source)))) {
    assets[name] = fileName;
    files[fileName] = entry;
  }
  return { assets, files };
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `.assets/` at the repository root: written by `npm run build`, never committed. */
export const DEFAULT_ASSETS_DIR = fileURLToPath(new URL('../../.assets', import.meta.url));
export const MANIFEST_FILE = 'manifest.json';

export type ContentCoding = 'br' | 'gzip' | 'identity';

export interface AssetVariant {
  /** Strong ETag of exactly these bytes, quoted. */
  etag: string;
  bytes: number;
}

/** One hashed file and the encodings written for it; `identity` always exists. */
export type AssetFile = { identity: AssetVariant } & Partial<Record<'br' | 'gzip', AssetVariant>>;

export interface AssetManifest {
  /** Package versions + build code hash the files were built from; equal key means nothing to do. */
  buildKey: string;
  /** Logical name (`graphiql.js`) -> hashed file name (`graphiql.3f2a9c1b.js`). */
  assets: Record<string, string>;
  /** Hashed file name -> its variants. */
  files: Record<string, AssetFile>;
}

/** The manifest as the pages see it: where the files are mounted comes with it. */
export interface MountedManifest extends AssetManifest {
  urlPrefix: string;
}

export const ENCODING_SUFFIX: Record<ContentCoding, string> = { br: '.br', gzip: '.gz', identity: '' };

/** Reads the manifest, or undefined when there is none or it is unreadable (a build must run). */
export function tryReadAssetManifest(dir: string): AssetManifest | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, MANIFEST_FILE), 'utf8')) as AssetManifest;
  } catch {
    return undefined;
  }
}

export function readAssetManifest(dir: string): AssetManifest {
  const manifest = tryReadAssetManifest(dir);
  if (!manifest) {
    throw new Error(
      `Static assets are not built: ${join(dir, MANIFEST_FILE)} is missing or unreadable. ` +
        'Run `npm run build` (it runs `tsx scripts/build-assets.ts`) before starting the service.',
    );
  }
  return manifest;
}

/** URL of a logical asset; throws on a name the build does not write, so a typo fails at startup. */
export function assetUrl(manifest: MountedManifest, logicalName: string): string {
  const file = Object.hasOwn(manifest.assets, logicalName) ? manifest.assets[logicalName] : undefined;
  if (!file) throw new Error(`No asset named ${logicalName} in the manifest; rebuild with \`npm run build\``);
  return `${manifest.urlPrefix}/${file}`;
}

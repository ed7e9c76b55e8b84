import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import {
  type AssetFile,
  type AssetManifest,
  DEFAULT_ASSETS_DIR,
  ENCODING_SUFFIX,
  MANIFEST_FILE,
  tryReadAssetManifest,
} from './asset-manifest.ts';

const require = createRequire(import.meta.url);
const GRAPHIQL_PACKAGE = '@graphql-yoga/render-graphiql';
const SWAGGER_PACKAGE = 'swagger-ui-dist';
/** The code that decides what lands in `.assets/`: a change to any of it must rebuild. */
const BUILD_INPUTS = ['build-assets.ts', 'asset-manifest.ts', 'graphiql-boot.js', 'api-docs-boot.js'];

const ownFile = (name: string) => fileURLToPath(new URL(name, import.meta.url));
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));
const packageVersion = (name: string) =>
  (JSON.parse(readFileSync(join(packageDir(name), 'package.json'), 'utf8')) as { version: string }).version;

function computeBuildKey(): string {
  const hash = createHash('sha256');
  for (const name of [GRAPHIQL_PACKAGE, SWAGGER_PACKAGE]) hash.update(`${name}@${packageVersion(name)}\n`);
  // Compressed bytes, hence strong ETags, may change with the compressor.
  hash.update(`zlib@${process.versions.zlib} brotli@${process.versions.brotli}\n`);
  for (const file of BUILD_INPUTS) hash.update(readFileSync(ownFile(file)));
  return hash.digest('hex').slice(0, 16);
}

const withoutSourceMapComment = (text: string) => text.replace(/\/[*/]# sourceMappingURL=\S+(\s*\*\/)?\s*$/, '');

/** Imported here only: the module is one huge string, costly in memory to whoever imports it (docs/benchmarks.md). */
async function graphiqlSources(): Promise<AssetSource[]> {
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  const favicon = Buffer.from(bundle.favicon.slice(bundle.favicon.indexOf(',') + 1), 'base64');
  return [
    { name: 'graphiql.js', content: Buffer.from(bundle.js) },
    { name: 'graphiql.css', content: Buffer.from(bundle.css) },
    { name: 'graphiql-editor.worker.js', content: Buffer.from(bundle.editorWorkerService) },
    { name: 'graphiql-json.worker.js', content: Buffer.from(bundle.jsonWorker) },
    { name: 'graphiql-graphql.worker.js', content: Buffer.from(bundle.graphqlWorker) },
    { name: 'graphiql-favicon.ico', content: favicon },
    { name: 'graphiql-boot.js', content: readFileSync(ownFile('graphiql-boot.js')) },
  ];
}

/** Only what the BaseLayout page needs: no standalone preset (its top bar loads any URL), no maps. */
function swaggerSources(): AssetSource[] {
  const file = (name: string) => readFileSync(join(packageDir(SWAGGER_PACKAGE), name), 'utf8');
  return [
    { name: 'swagger-ui-bundle.js', content: Buffer.from(withoutSourceMapComment(file('swagger-ui-bundle.js'))) },
    { name: 'swagger-ui.css', content: Buffer.from(withoutSourceMapComment(file('swagger-ui.css'))) },
    { name: 'swagger-favicon.png', content: readFileSync(join(packageDir(SWAGGER_PACKAGE), 'favicon-32x32.png')) },
    { name: 'api-docs-boot.js', content: readFileSync(ownFile('api-docs-boot.js')) },
  ];
}

function isComplete(dir: string, manifest: AssetManifest): boolean {
  return Object.entries(manifest.files).every(([name, file]) =>
    Object.keys(file).every((coding) => existsSync(join(dir, name + ENCODING_SUFFIX[coding as keyof typeof file]))),
  );
}

/** Swaps the finished build in whole, so a reader never sees half a directory. */
function moveIntoPlace(built: string, dir: string, buildKey: string): void {
  try {
    renameSync(built, dir);
  } catch {
    // Another build (a parallel test worker) may have finished first; its result is as good as ours.
    if (tryReadAssetManifest(dir)?.buildKey === buildKey) {
      rmSync(built, { recursive: true, force: true });
      return;
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(built, dir);
  }
}

/** Writes GraphiQL and Swagger UI into `dir` as hashed, precompressed files; a no-op when up to date. */
export async function buildAssets(options: { dir?: string; force?: boolean } = {}) {
  const started = performance.now();
  const dir = options.dir ?? DEFAULT_ASSETS_DIR;
  const buildKey = computeBuildKey();
  const current = tryReadAssetManifest(dir);
  const elapsed = () => Math.round(performance.now() - started);
  if (!options.force && current?.buildKey === buildKey && isComplete(dir, current)) {
    return { built: false, dir, manifest: current, milliseconds: elapsed() };
  }
  const building = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  mkdirSync(building, { recursive: true });
  try {
    const written = await writeHashedAssets(building, [...(await graphiqlSources()), ...swaggerSources()]);
    const manifest: AssetManifest = { buildKey, ...written };
    writeFileSync(join(building, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    moveIntoPlace(building, dir, buildKey);
    return { built: true, dir, manifest, milliseconds: elapsed() };
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
}

interface AssetSource {
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
async function writeHashedAssets(
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

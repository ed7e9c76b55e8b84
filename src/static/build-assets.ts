import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AssetManifest,
  DEFAULT_ASSETS_DIR,
  ENCODING_SUFFIX,
  MANIFEST_FILE,
  tryReadAssetManifest,
} from './asset-manifest.ts';
import { type AssetSource, writeHashedAssets } from './write-hashed-assets.ts';

const require = createRequire(import.meta.url);
const GRAPHIQL_PACKAGE = '@graphql-yoga/render-graphiql';
const SWAGGER_PACKAGE = 'swagger-ui-dist';
/** The code that decides what lands in `.assets/`: a change to any of it must rebuild. */
const BUILD_INPUTS = [
  'build-assets.ts',
  'write-hashed-assets.ts',
  'asset-manifest.ts',
  'graphiql-boot.js',
  'api-docs-boot.js',
];

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

export interface BuildAssetsResult {
  built: boolean;
  dir: string;
  manifest: AssetManifest;
  milliseconds: number;
}

/** Writes GraphiQL and Swagger UI into `dir` as hashed, precompressed files; a no-op when up to date. */
export async function buildAssets(options: { dir?: string; force?: boolean } = {}): Promise<BuildAssetsResult> {
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

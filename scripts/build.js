// @ts-check
// `npm run build` (dist/ by tsc, .assets/ by scripts/build-assets.ts) and, with --if-stale, the check
// `npm start`, `npm run keys`, `npm run documents` and `npm run webhooks` run first. Plain JavaScript: it must run where
// no TypeScript tool is installed (a production install), to say why the service cannot start there
// instead of crashing.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inputsDigest, STAMP_FILE } from './build-inputs.js';
import { withBuildLock } from './build-lock.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, STAMP_FILE);
/** What the build runs or reads from node_modules; all are devDependencies. */
const BUILD_TOOLS = ['typescript', 'tsx', '@graphql-yoga/render-graphiql', 'swagger-ui-dist'];

/** Why dist/ or .assets/ cannot be trusted, or null when both were built from the inputs as they are. */
function staleness() {
  if (!existsSync(join(ROOT, 'dist/main.js'))) return 'dist/ is not built';
  if (!existsSync(join(ROOT, '.assets/manifest.json'))) return '.assets/ is not built';
  if (!existsSync(STAMP)) return `${STAMP_FILE} is missing (dist/ was not built by npm run build)`;
  const built = readFileSync(STAMP, 'utf8').trim();
  return built === inputsDigest(ROOT) ? null : 'src/, a tsconfig or package-lock.json changed since the last build';
}

function buildToolsInstalled() {
  const require = createRequire(join(ROOT, 'package.json'));
  return BUILD_TOOLS.every((name) => {
    try {
      require.resolve(`${name}/package.json`);
      return true;
    } catch {
      return false;
    }
  });
}

/** Runs one build command; its output goes to stderr, so that stdout stays the command's answer. */
function run(/** @type {string[]} */ args) {
  const result = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) throw new Error(`build: node ${args.join(' ')} failed (${result.status ?? result.signal})`);
}

/** The digest is taken before compiling, so an edit made during the build leaves the stamp stale. */
function build() {
  const digest = inputsDigest(ROOT);
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, 'building\n');
  run([createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
  run(['--import', 'tsx', 'scripts/build-assets.ts']);
  writeFileSync(STAMP, `${digest}\n`);
}

/** Builds when asked to, or with --if-stale only when stale; returns the message to fail with, if any. */
function main(/** @type {boolean} */ ifStale) {
  const reason = staleness();
  if (ifStale && reason === null) return null;
  if (!buildToolsInstalled()) {
    return ifStale
      ? `petstore-gateway cannot start: ${reason}, and the build tools are not installed (a production install); ` +
          'build where the dev dependencies are: npm ci && npm run build && npm prune --omit=dev'
      : 'build: the build tools are not installed (npm ci installs them with the dev dependencies)';
  }
  withBuildLock(join(ROOT, 'dist'), () => {
    // Another process may have built while this one waited for the lock.
    const still = staleness();
    if (ifStale && still === null) return;
    if (ifStale) console.error(`build: rebuilding: ${still}`);
    build();
  });
  return null;
}

try {
  const failure = main(process.argv.includes('--if-stale'));
  if (failure) {
    console.error(failure);
    process.exitCode = 1;
  }
} catch (error) {
  console.error(/** @type {Error} */ (error).message);
  process.exitCode = 1;
}

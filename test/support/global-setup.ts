import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedDatabase } from '../../src/db/embedded.ts';
import { buildAssets } from '../../src/static/build-assets.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
  }
}

/** What `npm run build` makes: the pages' assets (every service needs them) and dist/ for `npm start`. */
async function build(): Promise<void> {
  await buildAssets();
  const tsc = spawnSync('npx', ['--no-install', 'tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
    timeout: 120_000,
  });
  if (tsc.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (${tsc.status ?? tsc.signal})`);
}

/** The real database for the run: MONGODB_URI when given, else the embedded FerretDB in a temp dir. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await build();
  const given = process.env.MONGODB_URI;
  if (given) {
    project.provide('mongoUri', given);
    return async () => {};
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'petstore-test-db-'));
  const database = await startEmbeddedDatabase({ dataDir, log: (message) => console.log(`[embedded db] ${message}`) });
  project.provide('mongoUri', database.uri);
  return async () => {
    await database.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}

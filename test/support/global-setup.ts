import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedDatabase } from '../../src/db/embedded.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
  }
}

/** What `npm run build` makes, unless it is current: the pages' assets (every service needs them) and dist/. */
function build(): void {
  const built = spawnSync(process.execPath, ['scripts/build.js', '--if-stale'], { stdio: 'inherit', timeout: 300_000 });
  if (built.status !== 0) throw new Error(`node scripts/build.js --if-stale failed (${built.status ?? built.signal})`);
}

/** The real database for the run: MONGODB_URI when given, else the embedded FerretDB in a temp dir. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  build();
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

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedDatabase } from '../src/db/embedded.ts';
import { dataOf, executeGraphQL } from './support/graphql-client.ts';
import { PetDocument } from './support/operations.ts';
import { expectStatus, restClient } from './support/rest-client.ts';
import { startTestServer, uniqueDbName } from './support/test-server.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'petstore-restart-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('embedded database', () => {
  it('when the service and its embedded database restart, then a pet created before is still there', async () => {
    const dbName = uniqueDbName('restart');
    const log = () => {};

    const firstDatabase = await startEmbeddedDatabase({ dataDir, log });
    const before = await startTestServer({ mongoUri: firstDatabase.uri, dbName, keepDatabase: true });
    const created = await restClient(before).createPet({ name: 'Survivor', categoryId: 9, status: 'sold' });
    expectStatus(created, 201);
    await before.close();
    await firstDatabase.stop();

    const secondDatabase = await startEmbeddedDatabase({ dataDir, log });
    const after = await startTestServer({ mongoUri: secondDatabase.uri, dbName });
    try {
      const fetched = await executeGraphQL(after, PetDocument, { id: String(created.body.id) });
      expect(dataOf(fetched).pet).toEqual({
        id: String(created.body.id),
        name: 'Survivor',
        categoryId: 9,
        status: 'SOLD',
      });
      // The id counter survived too: the next pet does not reuse the old id.
      const next = await restClient(after).createPet({ name: 'Next', categoryId: 9 });
      expectStatus(next, 201);
      expect(next.body.id).toBeGreaterThan(created.body.id);
    } finally {
      await after.close();
      await secondDatabase.stop();
    }
  });
});

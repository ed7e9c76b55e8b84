// What the petCreated tests share whatever the transport (SSE, WebSocket): the document, pets created
// over REST, the delivery deadline, the open-streams gauge, keys issued mid-run and published documents.
import { createHash } from 'node:crypto';
import { expect, vi } from 'vitest';
import { createApiKeyStore } from '../../src/auth/api-key-store.ts';
import type { Scope } from '../../src/auth/scopes.ts';
import { createPersistedDocumentStore } from '../../src/documents/published-documents.ts';
import { encodeCursor } from '../../src/pets/cursor.ts';
import { sampleIn } from './metric-sample.ts';
import type { GraphQLResult } from './sse.ts';
import { AUTH, type TestServer } from './test-server.ts';

export const PET_CREATED = `subscription PetCreated($status: PetStatus, $after: String) {
  petCreated(status: $status, after: $after) { cursor pet { id name status } }
}`;
/** How long a pet created over REST may take to reach a subscriber (issue 31). */
export const DELIVERY_MS = 1_000;
/** For a gauge or a log line to catch up. */
export const WAIT = { timeout: 5_000, interval: 50 };

export interface Delivered {
  cursor: string;
  pet: { id: string; name: string; status: string | null };
}

/** The `Authorization` header of a key. */
export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** Creates a pet over REST with the test key; expects 201 and returns the id. */
export async function createPet(server: TestServer, name: string, status?: string): Promise<number> {
  const response = await server.request
    .post(`${server.restBasePath}/pets`)
    .set(AUTH)
    .send({ name, categoryId: 1, ...(status ? { status } : {}) });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.id as number;
}

/** The result is this pet, without errors, under its own cursor. */
export function expectDelivered(result: GraphQLResult, id: number): Delivered {
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  const delivered = (result.data as { petCreated: Delivered }).petCreated;
  expect(delivered.pet.id).toBe(String(id));
  expect(delivered.cursor).toBe(encodeCursor(id));
  return delivered;
}

/** The open-streams gauge (graphql_subscriptions_open) of the server now. */
export async function openStreams(server: TestServer): Promise<number> {
  return sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open');
}

/** Issues a key and waits until the server has read it (issued keys are read every few seconds). */
export async function issueKey(server: TestServer, scopes?: Scope[], allowArbitraryDocuments = true): Promise<string> {
  const { key } = await createApiKeyStore(server.database.db).issue({
    name: 'subscriber',
    allowArbitraryDocuments,
    ...(scopes ? { scopes } : {}),
  });
  await vi.waitFor(
    async () => expect((await server.request.get(`${server.restBasePath}/pets`).set(bearer(key))).status).not.toBe(401),
    { timeout: 10_000, interval: 100 },
  );
  return key;
}

/** PET_CREATED's trusted-document id. */
export const PET_CREATED_ID = `sha256:${createHash('sha256').update(PET_CREATED, 'utf8').digest('hex')}`;

/** Publishes PET_CREATED under PET_CREATED_ID, for a server that enforces trusted documents. */
export async function publishPetCreated(server: TestServer): Promise<void> {
  await createPersistedDocumentStore(server.database.db).publish([
    { id: PET_CREATED_ID, document: PET_CREATED, operations: [{ name: 'PetCreated', type: 'subscription' }] },
  ]);
}

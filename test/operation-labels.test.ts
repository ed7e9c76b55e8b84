// The operation-name label budget (issue 36, L2): made-up names cannot push the operator's own
// operations, those of published documents, into "other", however they arrive.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApiKeyStore } from '../src/auth/api-key-store.ts';
import { checkManifest } from '../src/documents/manifest.ts';
import { createPersistedDocumentStore } from '../src/documents/published-documents.ts';
import { schema } from '../src/graphql/schema/index.ts';
import { MAX_OPERATION_NAMES } from '../src/metrics/operation-labels.ts';
import { sampleIn } from './support/metric-sample.ts';
import { AUTH, startTestServer, type TestServer } from './support/test-server.ts';

const OPERATOR_LIST = 'query OperatorPets { pets(limit: 1) { id } }';
const PUBLISHED_LATER = 'query OperatorLater { pets(limit: 2) { id } }';
/** Run before the made-up names, to know the service has read what was published. */
const READY_CHECK = 'query ReadyCheck { pets(limit: 3) { id } }';
const MADE_UP = 210;
/** The published ids are read every 2 s. */
const READ_WITHIN = { timeout: 10_000, interval: 100 };

const hexOf = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** Publishes as `npm run documents -- publish` does: the manifest checked, its operations' names stored. */
async function publish(server: TestServer, text: string): Promise<void> {
  const checked = checkManifest(JSON.stringify({ [hexOf(text)]: text }), schema);
  if (!checked.ok) throw new Error(checked.problem);
  await createPersistedDocumentStore(server.database.db).publish(checked.documents);
}

const post = (server: TestServer, auth: Record<string, string>, body: object) =>
  server.request.post('/graphql').set(auth).send(body);

/** Runs a published document by its id, once this instance has read that it is published. */
async function runPublished(server: TestServer, text: string): Promise<void> {
  await vi.waitFor(async () => {
    const response = await post(server, AUTH, { documentId: `sha256:${hexOf(text)}` });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.errors).toBeUndefined();
  }, READ_WITHIN);
}

/** Each made-up name once, twenty at a time. */
async function sendMadeUpNames(server: TestServer, from: number, count: number): Promise<void> {
  for (let start = from; start < from + count; start += 20) {
    const batch = Array.from({ length: Math.min(20, from + count - start) }, (_, i) => start + i);
    const statuses = await Promise.all(
      batch.map(async (n) => (await post(server, AUTH, { query: `query MadeUp${n} { __typename }` })).status),
    );
    expect(statuses.every((status) => status === 200)).toBe(true);
  }
}

/** The distinct operation labels graphql_operations_total has, as a scrape shows them. */
function operationLabels(text: string): Set<string> {
  const labels = [...text.matchAll(/^graphql_operations_total\{[^}]*operation="([^"]*)"/gm)];
  return new Set(labels.map((match) => match[1] as string));
}

describe('operation-name labels with made-up names past the budget (TRUSTED_DOCUMENTS=log)', () => {
  let server: TestServer;
  let scrape: () => Promise<string>;

  beforeAll(async () => {
    server = await startTestServer({ trustedDocuments: 'log' });
    scrape = async () => (await server.request.get('/metrics').set(AUTH)).text;
    await publish(server, OPERATOR_LIST);
    await publish(server, READY_CHECK);
    await runPublished(server, READY_CHECK);
    await sendMadeUpNames(server, 0, MADE_UP);
  });

  afterAll(async () => {
    await server?.close();
  });

  it("gives a published document's operation, first run after the budget is spent, its own label", async () => {
    await runPublished(server, OPERATOR_LIST);
    const text = await scrape();
    const labels = operationLabels(text);
    const madeUp = [...labels].filter((label) => label.startsWith('MadeUp'));
    console.info(
      `[operation labels] ${MADE_UP} made-up names: ${madeUp.length} labelled, ` +
        `${sampleIn(text, 'graphql_operations_total', { operation: 'other' })} counted as "other"`,
    );
    expect(sampleIn(text, 'graphql_operations_total', { operation: 'OperatorPets', outcome: 'success' })).toBe(1);
    // The rest of the budget went first come first served: the service's own two labels
    // ("anonymous", "invalid") and the two published names hold their places.
    expect(madeUp).toHaveLength(MAX_OPERATION_NAMES - 4);
    expect(sampleIn(text, 'graphql_operations_total', { operation: 'other' })).toBe(MADE_UP - madeUp.length);
  });

  it('gives its label to a document published after the budget is spent', async () => {
    await publish(server, PUBLISHED_LATER);
    await runPublished(server, PUBLISHED_LATER);
    const text = await scrape();
    expect(sampleIn(text, 'graphql_operations_total', { operation: 'OperatorLater', outcome: 'success' })).toBe(1);
    // Another new name still counts as "other".
    const others = sampleIn(text, 'graphql_operations_total', { operation: 'other' });
    await sendMadeUpNames(server, MADE_UP, 1);
    expect(sampleIn(await scrape(), 'graphql_operations_total', { operation: 'other' })).toBe(others + 1);
  });

  it('labels the published operation sent whole by a key that enforce would refuse (the signal before enforcing)', async () => {
    const issued = await createApiKeyStore(server.database.db).issue({ name: 'client' });
    const client = { Authorization: `Bearer ${issued.key}` };
    await vi.waitFor(async () => expect((await post(server, client, { query: OPERATOR_LIST })).status).toBe(200), {
      timeout: 10_000,
      interval: 100,
    });
    const text = await scrape();
    expect(sampleIn(text, 'graphql_untrusted_operations_total', { operation: 'OperatorPets' })).toBe(1);
    expect(sampleIn(text, 'graphql_untrusted_operations_total', { operation: 'other' })).toBe(0);
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate } from '@graphql-codegen/cli';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import codegenConfig, { PET_CLIENT_OUTPUT_DIR, petClientOutput } from '../codegen.ts';
import { CreatePetMutation, GetPetQuery, ListPetsQuery } from '../examples/pet-client/src/operations.ts';
import { createPetClient, type PetClient, PetClientError } from '../examples/pet-client/src/pet-client.ts';
import { type CommandRun, runDocuments, runKeys } from './support/cli-command.ts';
import { startTestServer, type TestServer } from './support/test-server.ts';

const MANIFEST = 'persisted-documents.json';

/** A command's --json output, or a failure that shows what it said. */
async function jsonOf<T>(run: Promise<CommandRun>): Promise<T> {
  const { code, stdout, stderr } = await run;
  expect(code, `exit ${code}\nstdout: ${stdout}\nstderr: ${stderr}`).toBe(0);
  return JSON.parse(stdout) as T;
}

interface Sent {
  method: string;
  url: URL;
  body: Record<string, unknown> | undefined;
}

/** A synced key and a published document reach the service within a refresh (about 2 s each). */
async function untilAccepted(client: PetClient): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await client.execute(ListPetsQuery, { first: 1 });
      return;
    } catch (error) {
      const notYet = ['UNAUTHENTICATED', 'PERSISTED_QUERY_NOT_IN_LIST'];
      if (!(error instanceof PetClientError && notYet.includes(error.code ?? '')) || Date.now() > deadline) throw error;
    }
    await sleep(200);
  }
}

describe('the pet-client example against TRUSTED_DOCUMENTS=enforce', () => {
  let outputDir: string;
  let freshManifest: Record<string, string>;
  let server: TestServer;
  let publishOutput: { published: string[]; alreadyPublished: string[] };
  let clientKey: string;
  const sent: Sent[] = [];
  let client: PetClient;

  beforeAll(async () => {
    outputDir = await mkdtemp(join(tmpdir(), 'pet-client-codegen-'));
    await generate({ ...codegenConfig, generates: { [`${outputDir}/`]: petClientOutput }, silent: true }, true);
    const manifestFile = join(outputDir, MANIFEST);
    freshManifest = JSON.parse(await readFile(manifestFile, 'utf8'));

    server = await startTestServer({ trustedDocuments: 'enforce' });
    const database = { MONGODB_URI: inject('mongoUri'), MONGODB_DB: server.dbName };
    publishOutput = await jsonOf(runDocuments(['publish', manifestFile, '--json'], database));
    ({ key: clientKey } = await jsonOf<{ key: string }>(runKeys(['create', 'example-client', '--json'], database)));

    const recordingFetch: typeof fetch = (input, init) => {
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      sent.push({ method: init?.method ?? 'GET', url: new URL(String(input)), body });
      return fetch(input, init);
    };
    client = createPetClient({ url: `${server.baseUrl}/graphql`, apiKey: clientKey, fetch: recordingFetch });
    await untilAccepted(client);
  });

  afterAll(async () => {
    await server?.close();
    if (outputDir) await rm(outputDir, { recursive: true, force: true });
  });

  it('generates the committed manifest, with sha256 ids', async () => {
    const committed = JSON.parse(await readFile(join(PET_CLIENT_OUTPUT_DIR, MANIFEST), 'utf8'));
    expect(freshManifest).toEqual(committed);
    expect(Object.keys(freshManifest)).toHaveLength(3);
    for (const id of Object.keys(freshManifest)) expect(id).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('publishes every document of the manifest', () => {
    expect(publishOutput.published.toSorted()).toEqual(Object.keys(freshManifest).toSorted());
    expect(publishOutput.alreadyPublished).toEqual([]);
  });

  let created: { id: string; name: string; categoryId: number; status: string | null };

  it('creates a pet by POSTing the mutation id and its variables, no document', async () => {
    const input = { name: 'Example Rex', categoryId: 3, status: 'AVAILABLE' as const };
    ({ createPet: created } = await client.execute(CreatePetMutation, { input }));
    expect(created).toMatchObject(input);
    const request = sent.at(-1)!;
    expect(request.method).toBe('POST');
    expect(Object.keys(request.body ?? {}).toSorted()).toEqual(['documentId', 'variables']);
    expect(freshManifest[request.body?.documentId as string]).toContain('mutation CreatePet');
  });

  it('reads the pet back with a GET naming the query id', async () => {
    const { pet } = await client.execute(GetPetQuery, { id: created.id });
    expect(pet).toEqual(created);
    const request = sent.at(-1)!;
    expect(request.method).toBe('GET');
    expect([...request.url.searchParams.keys()]).toEqual(['documentId', 'variables']);
    expect(freshManifest[request.url.searchParams.get('documentId')!]).toContain('query GetPet');
  });

  it('lists the first page with a GET naming the query id', async () => {
    const { petsConnection } = await client.execute(ListPetsQuery, { first: 20 });
    expect(petsConnection.nodes).toContainEqual(created);
    expect(sent.at(-1)!.method).toBe('GET');
  });

  it('throws the GraphQL error code for a document the service never got', async () => {
    const unpublished = { __meta__: { hash: `sha256:${'0'.repeat(64)}`, operationType: 'query' } };
    const error = await client
      .execute(unpublished as unknown as TypedDocumentNode<unknown, Record<string, never>>, {})
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(PetClientError);
    expect(error).toMatchObject({ code: 'PERSISTED_QUERY_NOT_IN_LIST', status: 400 });
  });

  it('refuses the same key a document of its own', async () => {
    const response = await fetch(`${server.baseUrl}/graphql`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${clientKey}`,
        Accept: 'application/graphql-response+json',
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] };
    expect(response.status, JSON.stringify(body)).toBe(403);
    expect(body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
    expect(body.data).toBeUndefined();
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate } from '@graphql-codegen/cli';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import codegenConfig, { PET_CLIENT_OUTPUT_DIR, petClientOutput } from '../codegen.ts';
import {
  CreatePetMutation,
  GetPetQuery,
  ListPetsQuery,
  PetCreatedSubscription,
} from '../examples/pet-client/src/operations.ts';
import { createPetClient, type PetClient, PetClientError } from '../examples/pet-client/src/pet-client.ts';
import { MAX_FRAME_CHARS } from '../examples/pet-client/src/sse-frames.ts';
import { encodeCursor } from '../src/pets/cursor.ts';
import { type CommandRun, runDocuments, runKeys } from './support/cli-command.ts';
import { sampleIn } from './support/metric-sample.ts';
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

/** What a promise settles to, or a failure after `ms` (a subscription's next event must not hang a test). */
async function within<T>(promise: Promise<T>, ms = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`nothing within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const rejectionOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );

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

    // Two streams per key, so that the refusal of a third is cheap to reach.
    server = await startTestServer({ trustedDocuments: 'enforce', env: { MAX_SUBSCRIPTIONS_PER_KEY: '2' } });
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
    expect(Object.keys(freshManifest)).toHaveLength(4);
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
  const openStreams = async () => sampleIn(await server.metrics.scrape.text(), 'graphql_subscriptions_open');
  const newPet = async (name: string) =>
    (await client.execute(CreatePetMutation, { input: { name, categoryId: 4, status: 'PENDING' } })).createPet;
  let firstCursor: string;
  let secondId: string;

  it('subscribes by POSTing the subscription id over SSE: two pets created through the client arrive in order, with cursors; abort ends the iteration and the stream', async () => {
    const controller = new AbortController();
    const events = await client.subscribe(PetCreatedSubscription, {}, { signal: controller.signal });
    const request = sent.at(-1)!;
    expect(request.method).toBe('POST');
    expect(Object.keys(request.body ?? {}).toSorted()).toEqual(['documentId', 'variables']);
    expect(freshManifest[request.body?.documentId as string]).toContain('subscription PetCreated');
    await vi.waitFor(async () => expect(await openStreams()).toBe(1), { timeout: 5_000, interval: 50 });

    const first = await newPet('Streamed-1');
    const second = await newPet('Streamed-2');
    const one = (await within(events.next())).value.petCreated;
    const two = (await within(events.next())).value.petCreated;
    expect([one.pet, two.pet]).toEqual([first, second]);
    expect([one.cursor, two.cursor]).toEqual([encodeCursor(Number(first.id)), encodeCursor(Number(second.id))]);
    firstCursor = one.cursor;
    secondId = second.id;

    const waiting = events.next();
    controller.abort();
    expect(await within(waiting)).toEqual({ done: true, value: undefined });
    await vi.waitFor(async () => expect(await openStreams()).toBe(0), { timeout: 5_000, interval: 50 });
  });

  it('resumes: with the first cursor as after, the second pet comes first; leaving the loop closes the stream', async () => {
    const events = await client.subscribe(PetCreatedSubscription, { after: firstCursor });
    const third = await newPet('Streamed-3');
    const delivered: string[] = [];
    for await (const { petCreated } of events) {
      delivered.push(petCreated.pet.id);
      if (petCreated.pet.id === third.id) break;
    }
    expect(delivered).toEqual([secondId, third.id]);
    await vi.waitFor(async () => expect(await openStreams()).toBe(0), { timeout: 5_000, interval: 50 });
  });

  it('a wrong key: PetClientError 401 UNAUTHENTICATED before any event', async () => {
    const wrong = createPetClient({ url: `${server.baseUrl}/graphql`, apiKey: 'pk_not-a-key' });
    const error = await rejectionOf(wrong.subscribe(PetCreatedSubscription, {}));
    expect(error).toBeInstanceOf(PetClientError);
    expect(error).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('a third stream of the key: PetClientError 429 TOO_MANY_SUBSCRIPTIONS before any event', async () => {
    const controller = new AbortController();
    const options = { signal: controller.signal };
    try {
      await client.subscribe(PetCreatedSubscription, {}, options);
      await client.subscribe(PetCreatedSubscription, {}, options);
      const error = await rejectionOf(client.subscribe(PetCreatedSubscription, {}, options));
      expect(error).toBeInstanceOf(PetClientError);
      expect(error).toMatchObject({ status: 429, code: 'TOO_MANY_SUBSCRIPTIONS' });
    } finally {
      controller.abort();
    }
    await vi.waitFor(async () => expect(await openStreams()).toBe(0), { timeout: 5_000, interval: 50 });
  });

  it('a request error arrives as the one event of the stream: PetClientError with its code, as execute throws', async () => {
    const events = await client.subscribe(PetCreatedSubscription, { after: 'not-our-cursor' });
    const error = await rejectionOf(within(events.next()));
    expect(error).toBeInstanceOf(PetClientError);
    expect(error).toMatchObject({ status: 200, code: 'BAD_USER_INPUT' });
    const unpublished = { __meta__: { hash: `sha256:${'1'.repeat(64)}`, operationType: 'subscription' } };
    const stream = await client.subscribe(unpublished as unknown as TypedDocumentNode<unknown, object>, {});
    expect(await rejectionOf(within(stream.next()))).toMatchObject({ code: 'PERSISTED_QUERY_NOT_IN_LIST' });
  });

  it('subscribe refuses a query document without sending it', async () => {
    const before = sent.length;
    await expect(client.subscribe(ListPetsQuery as never, {})).rejects.toThrow(TypeError);
    expect(sent).toHaveLength(before);
  });
});

/** A client whose fetch answers with this event-stream body, as a broken server or proxy might. */
function clientAnswering(body: ReadableStream<Uint8Array>): PetClient {
  const fetch: typeof globalThis.fetch = async () =>
    new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  return createPetClient({ url: 'http://127.0.0.1:9/graphql', apiKey: 'unused', fetch });
}

const petCreatedDocument = PetCreatedSubscription;
const encoder = new TextEncoder();

describe('the pet-client example reading a hostile event stream', () => {
  it('reads pings, CRLF line ends and events split across chunks; ends at complete', async () => {
    const event = JSON.stringify({ data: { petCreated: { cursor: 'c1', pet: { id: '1' } } } });
    const chunks = [':\r\n\r\n', 'event: next\r\ndata: ', `${event}\r`, '\n\r\n:\n\n', 'event: complete\ndata:\n\n'];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      },
    });
    const delivered: unknown[] = [];
    for await (const data of await clientAnswering(body).subscribe(petCreatedDocument, {})) delivered.push(data);
    expect(delivered).toEqual([JSON.parse(event).data]);
  });

  it('an unfinished frame over the bound throws PetClientError and cancels the body, however long the server goes on', async () => {
    let pulled = 0;
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(encoder.encode(pulled === 1 ? 'event: next\ndata: ' : 'x'.repeat(4096)));
      },
      cancel() {
        cancelled = true;
      },
    });
    const events = await clientAnswering(body).subscribe(petCreatedDocument, {});
    const error = await rejectionOf(within(events.next()));
    expect(error).toBeInstanceOf(PetClientError);
    expect((error as Error).message).toContain(`over ${MAX_FRAME_CHARS} characters`);
    await vi.waitFor(() => expect(cancelled).toBe(true));
    // Read to the bound and no further (the stream may queue a chunk or two ahead).
    expect(pulled * 4096).toBeLessThan(MAX_FRAME_CHARS + 8 * 4096);
  });

  it('a whole frame over the bound in one chunk is refused too', async () => {
    const big = `event: next\ndata: ${'y'.repeat(MAX_FRAME_CHARS)}\n\n`;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(big));
        controller.close();
      },
    });
    const events = await clientAnswering(body).subscribe(petCreatedDocument, {});
    const error = await rejectionOf(events.next());
    expect(error).toBeInstanceOf(PetClientError);
    expect((error as Error).message).toContain(`over ${MAX_FRAME_CHARS} characters`);
  });

  it('a stream cut before complete throws PetClientError (subscribe again with after)', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(':\n\n'));
        controller.close();
      },
    });
    const events = await clientAnswering(body).subscribe(petCreatedDocument, {});
    const error = await rejectionOf(events.next());
    expect(error).toBeInstanceOf(PetClientError);
    expect((error as Error).message).toContain('without complete');
  });
});

import { CreatePetMutation, GetPetQuery, ListPetsQuery, PetCreatedSubscription } from './operations.ts';
import { createPetClient, PetClientError } from './pet-client.ts';

// Subscribes to new pets, adds one, reads it back by id, lists the first page: published documents
// only, no query text. PETSTORE_AFTER (a cursor this printed before) resumes: the pets stored since come first.
const url = process.env.PETSTORE_URL ?? 'http://127.0.0.1:4000/graphql';
const apiKey = process.env.PETSTORE_API_KEY;
if (!apiKey) {
  console.error('Set PETSTORE_API_KEY to a key of the service (npm run keys -- create NAME).');
  process.exit(2);
}

const client = createPetClient({ url, apiKey });
try {
  const signal = AbortSignal.timeout(10_000); // never wait for ever on the event below
  const events = await client.subscribe(PetCreatedSubscription, { after: process.env.PETSTORE_AFTER }, { signal });
  const { createPet } = await client.execute(CreatePetMutation, {
    input: { name: `Rex ${new Date().toISOString()}`, categoryId: 1, status: 'AVAILABLE' },
  });
  console.log('created', createPet);
  for await (const { petCreated } of events) {
    console.log('event', petCreated.pet, `resume with PETSTORE_AFTER=${petCreated.cursor}`);
    if (petCreated.pet.id === createPet.id) break; // leaving the loop closes the stream
  }
  if (signal.aborted) console.warn('the new pet was not delivered within 10 s');
  const { pet } = await client.execute(GetPetQuery, { id: createPet.id });
  console.log('read back', pet);
  const { petsConnection } = await client.execute(ListPetsQuery, { first: 5 });
  console.log(`first page: ${petsConnection.nodes.length} pets, more: ${petsConnection.pageInfo.hasNextPage}`);
} catch (error) {
  if (!(error instanceof PetClientError)) throw error;
  // PERSISTED_QUERY_NOT_IN_LIST: the manifest was not published on this service's database yet.
  console.error(`${error.message} (HTTP ${error.status})`);
  process.exitCode = 1;
}

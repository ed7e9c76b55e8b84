import { createRestClient } from './rest-client.ts';
import { RestClientError } from './rest-client-error.ts';

// Adds two pets, reads one back, then walks every page of the listing by its Link headers.
const baseUrl = process.env.PETSTORE_URL ?? 'http://127.0.0.1:4000/v1';
const apiKey = process.env.PETSTORE_API_KEY;
if (!apiKey) {
  console.error('Set PETSTORE_API_KEY to a key of the service (npm run keys -- create NAME).');
  process.exit(2);
}

/** What a user of each refusal would do next. */
function advice(error: RestClientError): string {
  switch (error.code) {
    case 'BAD_USER_INPUT':
    case 'INVALID_JSON':
      return 'fix the request: the message names every invalid field';
    case 'UNAUTHENTICATED':
      return 'the key is missing, unknown, revoked or expired';
    case 'FORBIDDEN':
      return 'the key lacks the scope named in the message';
    case 'PET_NOT_FOUND':
      return 'no pet has this id';
    case 'RATE_LIMITED':
      return `slow down: retry in ${error.retryAfterSeconds ?? 1} s`;
    default:
      return 'see docs/api.md for this code';
  }
}

const client = createRestClient({ baseUrl, apiKey });
try {
  const rex = await client.createPet({ name: `Rex ${new Date().toISOString()}`, categoryId: 1, status: 'available' });
  await client.createPet({ name: 'Tom', categoryId: 2 });
  console.log('created', rex);
  console.log('read back', await client.getPet(rex.id));
  let count = 0;
  for await (const page of client.listPetPages({ limit: 20 })) count += page.length;
  console.log(`listed ${count} pets`);
} catch (error) {
  if (!(error instanceof RestClientError)) throw error;
  console.error(`${error.message} (HTTP ${error.status}): ${advice(error)}`);
  process.exitCode = 1;
}

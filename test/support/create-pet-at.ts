// Creating a pet on a service process known only by its origin (no TestServer to hand).
import { expect } from 'vitest';

/** Far beyond a create on a loaded machine; well within a test's own timeout. */
const CREATE_DEADLINE_MS = 10_000;

/** POSTs a pet named `name` to `${origin}/v1/pets` with `headers` (the key); expects 201, returns the id. */
export async function createPetAt(origin: string, headers: Record<string, string>, name: string): Promise<number> {
  const created = await fetch(`${origin}/v1/pets`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1 }),
    signal: AbortSignal.timeout(CREATE_DEADLINE_MS),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  return ((await created.json()) as { id: number }).id;
}

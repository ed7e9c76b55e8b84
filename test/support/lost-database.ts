import { afterAll, beforeAll } from 'vitest';
import { startServerWithLostDatabase, type TestServer } from './test-server.ts';

/**
 * The service after its database client was closed under it (startServerWithLostDatabase), for a file
 * or a describe block: started in beforeAll, closed in afterAll; call the result inside tests.
 */
export function useServerWithLostDatabase(): () => TestServer {
  let broken: TestServer | undefined;
  beforeAll(async () => {
    broken = await startServerWithLostDatabase();
  });
  afterAll(async () => broken?.close());
  return () => {
    if (!broken) throw new Error('the server starts in beforeAll: use it inside tests and hooks');
    return broken;
  };
}

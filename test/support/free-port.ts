import { createServer } from 'node:net';

/**
 * A loopback port free right now, for a process that must keep its port across restarts (a fleet
 * instance behind a balancer) or cannot be given port 0 (redis-server, haproxy).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

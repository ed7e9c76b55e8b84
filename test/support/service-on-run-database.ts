// The compiled service in a process of its own on the test run's FerretDB (global setup's), so that it
// starts without an embedded database of its own.
import { inject } from 'vitest';
import { type ServiceOptions, type ServiceProcess, startServiceProcess } from './service-process.ts';
import { API_KEY } from './test-server.ts';

export interface RunDatabaseServiceOptions {
  /** MONGODB_DB: uniqueDbName(...) for a database of its own; the same name for instances of one fleet. */
  dbName: string;
  /** Over API_KEYS=API_KEY and the database's address. */
  env?: Record<string, string>;
  /** What of its output also goes to our stderr; none by default. */
  echo?: ServiceOptions['echo'];
  /** 'npm' for the test of `npm start` itself; `node dist/main.js` by default. */
  via?: ServiceOptions['via'];
}

/** The compiled service keyed with API_KEY (unless `env` says otherwise), on the run's FerretDB. */
export function startServiceOnRunDatabase(options: RunDatabaseServiceOptions): Promise<ServiceProcess> {
  return startServiceProcess({
    via: options.via ?? 'node',
    echo: options.echo ?? 'none',
    env: { API_KEYS: API_KEY, MONGODB_URI: inject('mongoUri'), MONGODB_DB: options.dbName, ...options.env },
  });
}

/** `path` on the service as a newcomer types it: at localhost, where a development key may be offered. */
export function atLocalhost(service: ServiceProcess, path: string): string {
  return `http://localhost:${new URL(service.origin).port}${path}`;
}

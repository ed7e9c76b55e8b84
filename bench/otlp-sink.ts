// Where the traced targets export: a node:http server in the load generator that reads each OTLP
// POST and answers 200 with an empty (valid) protobuf response, keeping only counts. A real
// Collector would cost CPU of its own on this machine; the service's cost is serialising and
// sending, which this still makes it pay in full.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OtlpSink {
  /** The base URL (OTEL_EXPORTER_OTLP_ENDPOINT): the exporter posts to /v1/traces under it. */
  url: string;
  received(): { requests: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 }).end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => ({ requests, bytes }),
    close: () =>
      new Promise((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}

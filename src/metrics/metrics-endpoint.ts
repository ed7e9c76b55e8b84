import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { sendError } from '../http/send-json.ts';
import type { Metrics } from './metrics.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** GET /metrics: the Prometheus text, never cached (every scrape must see the counters now). */
export function createMetricsHandler(metrics: Metrics, logger: Logger): Handler {
  return (_req, res) =>
    void metrics.scrape.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.scrape.contentType, 'Cache-Control': 'no-store' });
        res.end(text);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'collecting the metrics failed');
        sendError(res, 'rest', { status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'Unexpected error.' });
      },
    );
}

/** The private metrics port (METRICS_PORT): GET or HEAD /metrics without a key, 404 for anything else. */
export function createMetricsListener(sendMetrics: Handler): Handler {
  return (req, res) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const path = req.url?.split('?')[0];
    if (path === '/metrics' && (req.method === 'GET' || req.method === 'HEAD')) return sendMetrics(req, res);
    sendError(res, 'rest', { status: 404, code: 'ROUTE_NOT_FOUND', message: `No route ${req.method} ${path}` });
  };
}

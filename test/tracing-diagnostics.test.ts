import { diag } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { logTracingProblems, TRACING_PROBLEM_LOG_EVERY_MS } from '../src/telemetry/diagnostics.ts';
import { capturingLogger } from './support/capturing-logger.ts';

afterAll(() => diag.disable());

describe("the SDK's own problems (a failed export) in the service's log", () => {
  it('are one warn line a minute at most, with the error message and how many were held back', () => {
    const { logger, lines } = capturingLogger();
    let now = 1_000_000;
    logTracingProblems(logger, () => now);
    const exportFailed = JSON.stringify({
      stack: 'OTLPExporterError: Bad Request\n    at …',
      message: 'Bad Request',
      code: '400',
    });

    diag.error(exportFailed);
    diag.error(exportFailed);
    diag.warn('Dropped 12 spans because maxQueueSize reached');
    now += TRACING_PROBLEM_LOG_EVERY_MS;
    diag.warn('Dropped 12 spans because maxQueueSize reached');
    diag.info('not a problem');

    expect(lines).toEqual([
      expect.objectContaining({ level: 40, detail: 'Bad Request (400)', problemsSinceLastLine: 0 }),
      expect.objectContaining({
        level: 40,
        detail: 'Dropped 12 spans because maxQueueSize reached',
        problemsSinceLastLine: 2,
      }),
    ]);
  });
});

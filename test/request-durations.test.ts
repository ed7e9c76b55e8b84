import { describe, expect, it } from 'vitest';
import { createMetrics, REQUEST_DURATION_BUCKETS } from '../src/metrics/metrics.ts';

const NAME = 'http_request_duration_seconds';
const last = REQUEST_DURATION_BUCKETS.at(-1) as number;

/** The lines of a Prometheus histogram for these observations, worked out here, one series at a time. */
function expectedLines(seen: [string, string, number, number][]): string[] {
  const series = new Map<string, number[]>();
  for (const [route, method, status, seconds] of seen) {
    const labels = `route="${route}",method="${method}",status="${status}"`;
    series.set(labels, [...(series.get(labels) ?? []), seconds]);
  }
  return [...series].flatMap(([labels, values]) => [
    ...REQUEST_DURATION_BUCKETS.map(
      (le) => `${NAME}_bucket{le="${le}",${labels}} ${values.filter((value) => value <= le).length}`,
    ),
    `${NAME}_bucket{le="+Inf",${labels}} ${values.length}`,
    `${NAME}_sum{${labels}} ${values.reduce((sum, value) => sum + value, 0)}`,
    `${NAME}_count{${labels}} ${values.length}`,
  ]);
}

async function scrapedLines(metrics: ReturnType<typeof createMetrics>): Promise<string[]> {
  return (await metrics.scrape.text()).split('\n').filter((line) => line.startsWith(`${NAME}_`));
}

describe('request durations (http_request_duration_seconds)', () => {
  it('counts each observation in every bucket at or above it, by route, method and status, past the last only in +Inf', async () => {
    const metrics = createMetrics();
    const seen: [string, string, number, number][] = [
      ['/v1/pets/{petId}', 'GET', 200, 0.0004],
      ['/v1/pets', 'POST', 201, REQUEST_DURATION_BUCKETS[2] as number],
      ['/v1/pets/{petId}', 'GET', 404, 0.02],
      ['/v1/pets/{petId}', 'GET', 200, REQUEST_DURATION_BUCKETS[0] as number],
      ['/graphql', 'POST', 200, last + 1],
      ['/v1/pets/{petId}', 'GET', 200, 0.0071],
      ['/v1/pets', 'POST', 201, 0],
      ['/v1/pets/{petId}', 'HEAD', 200, 0.2],
      ['/v1/pets', 'GET', 499, last],
    ];
    for (const [route, method, status, seconds] of seen) metrics.observeRequest(route, method, status, seconds);
    expect((await scrapedLines(metrics)).sort()).toEqual(expectedLines(seen).sort());
  });

  it('says it is a histogram, and shows nothing before the first request', async () => {
    const metrics = createMetrics();
    const text = await metrics.scrape.text();
    expect(text).toContain(`# TYPE ${NAME} histogram`);
    expect(await scrapedLines(metrics)).toEqual([]);
  });
});

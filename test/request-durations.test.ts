import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createRequestDurations } from '../src/metrics/request-durations.ts';

const OPTIONS = {
  name: 'http_request_duration_seconds',
  help: 'Time from a request arriving to its response being sent.',
  buckets: [0.001, 0.005, 0.01, 0.1, 1],
};

/** The same observations through prom-client's Histogram and through ours, each in its own registry. */
function both() {
  const theirs = new Registry();
  const ours = new Registry();
  const histogram = new Histogram({ ...OPTIONS, labelNames: ['route', 'method', 'status'], registers: [theirs] });
  const durations = createRequestDurations(ours, OPTIONS);
  const observe = (route: string, method: string, status: number, seconds: number) => {
    histogram.observe({ route, method, status: String(status) }, seconds);
    durations.observe(route, method, status, seconds);
  };
  return { theirs, ours, observe };
}

/** A scrape's lines; series may come in another order, the lines of each are what must match. */
const linesOf = async (registry: Registry) => (await registry.metrics()).split('\n').sort();

describe("request durations, counted without prom-client's Histogram", () => {
  it('scrape as the same lines as prom-client for the same observations: bounds, past the last, several series', async () => {
    const { theirs, ours, observe } = both();
    const seen: [string, string, number, number][] = [
      ['/v1/pets/{petId}', 'GET', 200, 0.0004],
      ['/v1/pets', 'POST', 201, 0.005],
      ['/v1/pets/{petId}', 'GET', 404, 0.02],
      ['/v1/pets/{petId}', 'GET', 200, 0.001],
      ['/graphql', 'POST', 200, 3.5],
      ['/v1/pets/{petId}', 'GET', 200, 0.0071],
      ['/v1/pets', 'POST', 201, 0],
      ['/v1/pets/{petId}', 'HEAD', 200, 0.2],
    ];
    for (const args of seen) observe(...args);
    const expected = await linesOf(theirs);
    expect(expected.some((line) => line.startsWith('http_request_duration_seconds_bucket{le="+Inf"'))).toBe(true);
    expect(await linesOf(ours)).toEqual(expected);
  });

  it('gives the same JSON as prom-client (labels in one object), and nothing once reset', async () => {
    const { theirs, ours, observe } = both();
    observe('/v1/pets', 'GET', 200, 0.003);
    observe('/v1/pets', 'GET', 499, 12);
    const [theirMetric] = await theirs.getMetricsAsJSON();
    const [ourMetric] = await ours.getMetricsAsJSON();
    // The samples' names, labels and values (prom-client adds an empty exemplar to buckets; ours has none).
    const sorted = (values: { metricName?: string; labels: object; value: number }[] | undefined) =>
      (values ?? []).map(({ metricName, labels, value }) => JSON.stringify({ metricName, labels, value })).sort();
    expect(sorted(ourMetric?.values)).toEqual(sorted(theirMetric?.values));
    expect({ ...ourMetric, values: [] }).toEqual({ ...theirMetric, values: [] });
    ours.resetMetrics();
    expect((await ours.getMetricsAsJSON())[0]?.values).toEqual([]);
  });
});

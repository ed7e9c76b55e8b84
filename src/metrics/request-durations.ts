import type { Registry } from 'prom-client';

interface Series {
  labels: { route: string; method: string; status: string };
  /** Observations per bucket, not yet cumulative: index i is (bucket i-1, bucket i]. */
  counts: number[];
  sum: number;
  count: number;
}

/** One sample as prom-client's registry formats it: `le` first, then the series' labels. */
interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
}

export interface RequestDurationsOptions {
  name: string;
  help: string;
  /** Upper bounds in seconds, ascending; +Inf is added, as Prometheus asks. */
  buckets: readonly number[];
}

/**
 * A Prometheus histogram of request durations by route, method and status, counted here and
 * exposed by prom-client's registry, which formats whatever `getForPromString` returns.
 * prom-client's own Histogram validates the labels and builds a hash string from them on every
 * observe: 3.6 µs of a REST get's main thread, on every request (README, decisions). Here one request is three
 * Map lookups and a few additions; the scrape returns the samples prom-client's Histogram returns
 * for the same observations (test/request-durations.test.ts holds the two together).
 */
export function createRequestDurations(registry: Registry, { name, help, buckets }: RequestDurationsOptions) {
  /** route -> method -> status -> series: no key string is built per request. */
  const series = new Map<string, Map<string, Map<number, Series>>>();

  function seriesOf(route: string, method: string, status: number): Series {
    let byMethod = series.get(route);
    if (!byMethod) {
      byMethod = new Map();
      series.set(route, byMethod);
    }
    let byStatus = byMethod.get(method);
    if (!byStatus) {
      byStatus = new Map();
      byMethod.set(method, byStatus);
    }
    let found = byStatus.get(status);
    if (!found) {
      found = { labels: { route, method, status: String(status) }, counts: buckets.map(() => 0), sum: 0, count: 0 };
      byStatus.set(status, found);
    }
    return found;
  }

  function samples(): Sample[] {
    const out: Sample[] = [];
    for (const byMethod of series.values()) {
      for (const byStatus of byMethod.values()) {
        for (const { labels, counts, sum, count } of byStatus.values()) {
          let cumulative = 0;
          buckets.forEach((le, index) => {
            cumulative += counts[index] ?? 0;
            out.push({ metricName: `${name}_bucket`, labels: { le }, sharedLabels: labels, value: cumulative });
          });
          out.push({ metricName: `${name}_bucket`, labels: { le: '+Inf' }, sharedLabels: labels, value: count });
          out.push({ metricName: `${name}_sum`, labels: {}, sharedLabels: labels, value: sum });
          out.push({ metricName: `${name}_count`, labels: {}, sharedLabels: labels, value: count });
        }
      }
    }
    return out;
  }

  const metric = {
    name,
    help,
    type: 'histogram' as const,
    aggregator: 'sum' as const,
    getForPromString: async () => ({ name, help, type: metric.type, aggregator: metric.aggregator, values: samples() }),
    /** As prom-client's get(): each sample's labels in one object. */
    get: async () => {
      const data = await metric.getForPromString();
      return {
        ...data,
        values: data.values.map(({ metricName, labels, sharedLabels, value }) => ({
          metricName,
          labels: { ...labels, ...sharedLabels },
          value,
        })),
      };
    },
    reset: () => series.clear(),
  };
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);

  return {
    observe(route: string, method: string, status: number, seconds: number): void {
      const found = seriesOf(route, method, status);
      found.sum += seconds;
      found.count++;
      // Past the last bound it counts only in +Inf, which is the count.
      for (let index = 0; index < buckets.length; index++) {
        if (seconds <= (buckets[index] as number)) {
          found.counts[index] = (found.counts[index] ?? 0) + 1;
          return;
        }
      }
    },
  };
}

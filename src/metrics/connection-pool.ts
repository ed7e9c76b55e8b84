import type { MongoClient } from 'mongodb';
import type { Gauge } from 'prom-client';

type PoolEvent = { address: string; connectionId: number | '<monitor>' };

/**
 * Follows the driver's connection pool events (CMAP), which every MongoClient emits. Connections are
 * tracked by id, so those made before this was called count from their first use on.
 */
export function watchConnectionPool(client: MongoClient, openGauge: Gauge, inUseGauge: Gauge): void {
  const open = new Set<string>();
  const inUse = new Set<string>();
  const idOf = (event: PoolEvent) => `${event.address}/${event.connectionId}`;
  const on = (
    name: 'connectionCreated' | 'connectionCheckedOut' | 'connectionCheckedIn' | 'connectionClosed',
    change: (id: string) => void,
  ) =>
    client.on(name, (event: PoolEvent) => {
      change(idOf(event));
      openGauge.set(open.size);
      inUseGauge.set(inUse.size);
    });
  on('connectionCreated', (id) => open.add(id));
  on('connectionCheckedOut', (id) => {
    open.add(id);
    inUse.add(id);
  });
  on('connectionCheckedIn', (id) => inUse.delete(id));
  on('connectionClosed', (id) => {
    open.delete(id);
    inUse.delete(id);
  });
}

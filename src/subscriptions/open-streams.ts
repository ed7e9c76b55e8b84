import type { StreamEnd } from '../http/exchange.ts';

/** Why a stream was refused before its first event: the key's streams, the instance's, or a stopping instance. */
export type StreamRefusal = 'per_key' | 'instance' | 'shutdown';

/** What the open streams report to metrics (metrics.ts implements it). */
export interface StreamMetrics {
  setOpenStreams(count: number): void;
  countStreamEvent(): void;
  countStreamRefused(reason: StreamRefusal): void;
  countStreamEnded(reason: StreamEnd): void;
}

/** One admitted stream: its signal aborts when it must end; `end` releases it, once, whoever calls first. */
export interface StreamSlot {
  readonly signal: AbortSignal;
  /** Counts one event delivered to the client. */
  delivered(): void;
  end(reason: StreamEnd): void;
}

export interface OpenStreamsOptions {
  /** Most streams one API key may hold open on this instance. */
  maxPerKey: number;
  /** Most streams this instance holds open. */
  maxTotal: number;
  metrics: StreamMetrics;
}

/** Told of what happened to one slot, beside the metrics: the exchange's record for the access log. */
export interface SlotObserver {
  delivered(): void;
  ended(reason: StreamEnd): void;
}

/** A slot over its controller: `release` runs once, on the first `end`. */
function slotOf(
  controller: AbortController,
  metrics: StreamMetrics,
  observer: SlotObserver,
  release: () => void,
): StreamSlot {
  let ended = false;
  return {
    signal: controller.signal,
    delivered() {
      metrics.countStreamEvent();
      observer.delivered();
    },
    end(reason) {
      if (ended) return;
      ended = true;
      release();
      metrics.countStreamEnded(reason);
      observer.ended(reason);
      // The source may still be waiting for a pet: this ends its wait.
      controller.abort(reason);
    },
  };
}

/**
 * The streams this instance holds open, counted per key and in all, so that neither a key nor the
 * instance holds more than its limit. A slot is taken before any event and released exactly once,
 * however the stream ends (its source's end, the client leaving, the response closing unused).
 */
export function createOpenStreams({ maxPerKey, maxTotal, metrics }: OpenStreamsOptions) {
  const perKey = new Map<string, number>();
  const open = new Set<AbortController>();
  let shuttingDown = false;

  function release(keyId: string, controller: AbortController): void {
    open.delete(controller);
    const left = (perKey.get(keyId) ?? 1) - 1;
    if (left > 0) perKey.set(keyId, left);
    else perKey.delete(keyId);
    metrics.setOpenStreams(open.size);
  }

  function refusalFor(keyId: string): StreamRefusal | undefined {
    if (shuttingDown) return 'shutdown';
    if ((perKey.get(keyId) ?? 0) >= maxPerKey) return 'per_key';
    if (open.size >= maxTotal) return 'instance';
    return undefined;
  }

  return {
    /** A slot for `keyId`'s new stream, or why there is none. */
    take(keyId: string, observer: SlotObserver): StreamSlot | StreamRefusal {
      const refused = refusalFor(keyId);
      if (refused) {
        metrics.countStreamRefused(refused);
        return refused;
      }
      const controller = new AbortController();
      open.add(controller);
      perKey.set(keyId, (perKey.get(keyId) ?? 0) + 1);
      metrics.setOpenStreams(open.size);
      return slotOf(controller, metrics, observer, () => release(keyId, controller));
    },
    /**
     * Ends every open stream (their sources see the abort and return, so SSE sends `complete`) and
     * refuses new ones from now on: the instance is going away.
     */
    endAll(): void {
      shuttingDown = true;
      for (const controller of [...open]) controller.abort('shutdown');
    },
    get size(): number {
      return open.size;
    },
  };
}

export type OpenStreams = ReturnType<typeof createOpenStreams>;

import type { KeyGone, StreamEnd, StreamRefusal } from '../http/stream-outcomes.ts';

/**
 * How long a stream has to end once the instance told it to. A stream whose client is not reading
 * cannot take the abort (its events wait for the socket to drain), so it is cut then instead: no
 * stream holds the drain.
 */
export const STREAM_CUT_AFTER_MS = 1_000;

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

/** The stream's exchange, told what happened to its slot: its record for the access log, and its connection. */
export interface SlotObserver {
  delivered(): void;
  ended(reason: StreamEnd): void;
  /** Cuts the connection the stream travels on: it did not end when the instance told it to. */
  cut(): void;
}

/** An open stream as the instance tracks it: its slot, whose key, the controller behind its signal. */
interface OpenSlot extends StreamSlot {
  readonly keyId: string;
  readonly controller: AbortController;
  readonly cut: () => void;
}

/** A slot whose `end` releases it (once, whoever calls first) and tells metrics and the exchange. */
function openSlot(
  keyId: string,
  metrics: StreamMetrics,
  observer: SlotObserver,
  release: (entry: OpenSlot) => void,
): OpenSlot {
  const controller = new AbortController();
  let ended = false;
  const entry: OpenSlot = {
    keyId,
    controller,
    signal: controller.signal,
    cut: () => observer.cut(),
    delivered() {
      metrics.countStreamEvent();
      observer.delivered();
    },
    end(reason) {
      if (ended) return;
      ended = true;
      release(entry);
      metrics.countStreamEnded(reason);
      observer.ended(reason);
      // The source may still be waiting for a pet: this ends its wait.
      controller.abort(reason);
    },
  };
  return entry;
}

/**
 * The streams this instance holds open, counted per key and in all, so that neither a key nor the
 * instance holds more than its limit. A slot is taken before any event and released exactly once,
 * however the stream ends (its source's end, the client leaving, the response closing unused).
 */
export function createOpenStreams({ maxPerKey, maxTotal, metrics }: OpenStreamsOptions) {
  const perKey = new Map<string, number>();
  const open = new Set<OpenSlot>();
  let shuttingDown = false;
  let cutTimer: NodeJS.Timeout | undefined;

  function release(entry: OpenSlot): void {
    open.delete(entry);
    const left = (perKey.get(entry.keyId) ?? 1) - 1;
    if (left > 0) perKey.set(entry.keyId, left);
    else perKey.delete(entry.keyId);
    metrics.setOpenStreams(open.size);
    if (open.size === 0) clearTimeout(cutTimer);
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
      const entry = openSlot(keyId, metrics, observer, release);
      open.add(entry);
      perKey.set(keyId, (perKey.get(keyId) ?? 0) + 1);
      metrics.setOpenStreams(open.size);
      return entry;
    },
    /**
     * Ends every open stream (their sources see the abort and return, so SSE sends `complete`),
     * cuts the connection of any not ended STREAM_CUT_AFTER_MS later, and refuses new ones from now
     * on: the instance is going away.
     */
    endAll(): void {
      if (shuttingDown) return;
      shuttingDown = true;
      for (const { controller } of [...open]) controller.abort('shutdown');
      // Unref'd: a stopping process never waits for this timer, only for its streams. Those still open
      // then are released as ended by the shutdown, and their connections cut.
      const cutEach = () => {
        for (const entry of [...open]) {
          entry.end('shutdown');
          entry.cut();
        }
      };
      if (open.size > 0) cutTimer = setTimeout(cutEach, STREAM_CUT_AFTER_MS).unref();
    },
    /** The key was revoked or expired: its streams end (SSE `complete`). Most keys reported have none here. */
    endKey(keyId: string, why: KeyGone): void {
      if (perKey.has(keyId)) for (const entry of [...open]) if (entry.keyId === keyId) entry.end(why);
    },
    get size(): number {
      return open.size;
    },
  };
}

import { describe, expect, it } from 'vitest';
import type { ActiveKey } from '../src/auth/api-key-store.ts';
import { sha256Hex } from '../src/auth/api-key-store.ts';
import { createKeyRing } from '../src/auth/api-keys.ts';

const CONFIGURED = 'configured-key-aaaaaaaaaaaaaaaa';

/** An issued key as the collection gives it: `expiresAt` in the ring's clock (null: never). */
function issued(id: string, expiresAt: number | null): ActiveKey {
  return {
    id,
    digest: sha256Hex(`token-of-${id}`),
    expiresAt: expiresAt === null ? null : new Date(expiresAt),
    allowArbitraryDocuments: false,
    scopes: ['pets:read'],
  };
}

/** A ring on a clock the test moves. */
function ringAt(start: number) {
  const clock = { now: start };
  const ring = createKeyRing([CONFIGURED], () => clock.now);
  return { ring, clock };
}

describe('the key ring reports keys that expired since it last did', () => {
  it('reports a key once when its expiry is reached, then never again', () => {
    const { ring, clock } = ringAt(1_000);
    ring.setIssuedKeys([issued('key_a', 2_000), issued('key_b', 5_000)]);
    expect(ring.takeExpired()).toEqual([]);
    clock.now = 1_999;
    expect(ring.takeExpired()).toEqual([]);
    clock.now = 2_000;
    expect(ring.takeExpired()).toEqual(['key_a']);
    expect(ring.takeExpired()).toEqual([]);
    clock.now = 9_000;
    expect(ring.takeExpired()).toEqual(['key_b']);
    // The same keys read again (the sync reads every interval): nothing new to report.
    ring.setIssuedKeys([issued('key_a', 2_000), issued('key_b', 5_000)]);
    expect(ring.takeExpired()).toEqual([]);
  });

  it('a key given a later expiry before it is reached is not reported at the old one, only at the new', () => {
    const { ring, clock } = ringAt(1_000);
    ring.setIssuedKeys([issued('key_a', 2_000)]);
    clock.now = 1_500;
    ring.setIssuedKeys([issued('key_a', 8_000)]);
    clock.now = 3_000;
    expect(ring.takeExpired()).toEqual([]);
    clock.now = 8_000;
    expect(ring.takeExpired()).toEqual(['key_a']);
  });

  it('a key reported, then re-issued with a later expiry, is reported again only once that one is reached', () => {
    const { ring, clock } = ringAt(3_000);
    ring.setIssuedKeys([issued('key_a', 2_000)]);
    expect(ring.takeExpired()).toEqual(['key_a']);
    ring.setIssuedKeys([issued('key_a', 6_000)]);
    clock.now = 5_000;
    expect(ring.takeExpired()).toEqual([]);
    clock.now = 6_000;
    expect(ring.takeExpired()).toEqual(['key_a']);
    expect(ring.takeExpired()).toEqual([]);
  });

  it('a reported expiry, extended and then set back to the same time, is reported again', () => {
    const { ring } = ringAt(3_000);
    ring.setIssuedKeys([issued('key_a', 2_000)]);
    expect(ring.takeExpired()).toEqual(['key_a']);
    // Extended: a client may open a stream with it again.
    ring.setIssuedKeys([issued('key_a', 60_000)]);
    expect(ring.takeExpired()).toEqual([]);
    // Set back to the expiry already reported: that stream must end too.
    ring.setIssuedKeys([issued('key_a', 2_000)]);
    expect(ring.takeExpired()).toEqual(['key_a']);
    expect(ring.takeExpired()).toEqual([]);
  });

  it('an expiry moved into the past is reported at the next call', () => {
    const { ring, clock } = ringAt(1_000);
    ring.setIssuedKeys([issued('key_a', 60_000)]);
    expect(ring.takeExpired()).toEqual([]);
    clock.now = 2_000;
    ring.setIssuedKeys([issued('key_a', 1_500)]);
    expect(ring.takeExpired()).toEqual(['key_a']);
  });

  it('configured keys and keys without an expiry are never reported', () => {
    const { ring, clock } = ringAt(1_000);
    ring.setIssuedKeys([issued('key_forever', null)]);
    clock.now = Number.MAX_SAFE_INTEGER;
    expect(ring.takeExpired()).toEqual([]);
    expect(ring.verify(`Bearer ${CONFIGURED}`).ok).toBe(true);
  });

  it('a key revoked before its expiry is reported gone, not expired', () => {
    const { ring, clock } = ringAt(1_000);
    ring.setIssuedKeys([issued('key_a', 2_000), issued('key_b', 2_000)]);
    expect(ring.setIssuedKeys([issued('key_b', 2_000)])).toEqual(['key_a']);
    clock.now = 2_000;
    expect(ring.takeExpired()).toEqual(['key_b']);
  });

  it('reports agree with verify: a reported key no longer authenticates, an unreported one still does', () => {
    const { ring, clock } = ringAt(1_000);
    const early = issued('key_early', 2_000);
    ring.setIssuedKeys([early, issued('key_late', 4_000)]);
    clock.now = 2_000;
    expect(ring.takeExpired()).toEqual(['key_early']);
    expect(ring.verify('Bearer token-of-key_early')).toEqual({ ok: false, keyWasSent: true });
    expect(ring.verify('Bearer token-of-key_late').ok).toBe(true);
  });
});

describe('the key ring says whether a key, by id, still authenticates', () => {
  it('configured keys and issued ones before their expiry: yes; expired: expired; revoked or unknown: revoked', () => {
    const { ring, clock } = ringAt(1_000);
    ring.setIssuedKeys([issued('key_a', 2_000), issued('key_forever', null)]);
    const configuredId = ring.verify(`Bearer ${CONFIGURED}`);
    expect(configuredId.ok && ring.standing(configuredId.keyId)).toBeUndefined();
    expect(ring.standing('key_a')).toBeUndefined();
    expect(ring.standing('key_forever')).toBeUndefined();
    expect(ring.standing('key_never_issued')).toBe('revoked');
    clock.now = 2_000;
    expect(ring.standing('key_a')).toBe('expired');
    ring.setIssuedKeys([issued('key_a', 2_000)]);
    expect(ring.standing('key_forever')).toBe('revoked');
  });
});

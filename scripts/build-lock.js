// @ts-check
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const WAIT_MS = 600_000;
const POLL_MS = 250;
/** A lock directory without its pid file for this long was left by a process that died taking it. */
const ORPHAN_MS = 5_000;

const sleep = (/** @type {number} */ ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function alive(/** @type {number} */ pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return /** @type {NodeJS.ErrnoException} */ (error).code === 'EPERM';
  }
}

/** True when the lock's holder is gone: its pid is dead, or it never wrote one. */
function abandoned(/** @type {string} */ lock) {
  try {
    return !alive(Number(readFileSync(join(lock, 'pid'), 'utf8')));
  } catch {
    try {
      return Date.now() - statSync(lock).mtimeMs > ORPHAN_MS;
    } catch {
      return false;
    }
  }
}

/**
 * Takes `lock` (a directory with our pid in it) when free, or when its holder died; false while a
 * live process holds it.
 * @param {string} lock
 */
function tryTake(lock) {
  for (;;) {
    try {
      mkdirSync(lock);
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
      if (!abandoned(lock)) return false;
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    try {
      writeFileSync(join(lock, 'pid'), String(process.pid));
    } catch (error) {
      rmSync(lock, { recursive: true, force: true });
      throw error;
    }
    return true;
  }
}

/** @param {string} dir */
function lockIn(dir) {
  mkdirSync(dir, { recursive: true });
  return join(dir, '.build-lock');
}

/**
 * Runs `work` holding `<dir>/.build-lock`: two starts at once (tests, a second terminal) would otherwise
 * both compile into dist/ while the first one's service is already loading it.
 * @param {string} dir @param {() => void} work
 */
export function withBuildLock(dir, work) {
  const lock = lockIn(dir);
  const deadline = Date.now() + WAIT_MS;
  while (!tryTake(lock)) {
    if (Date.now() > deadline) throw new Error(`build: ${lock} is still held after ${WAIT_MS / 1000} s`);
    sleep(POLL_MS);
  }
  try {
    work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * The same lock around asynchronous work (a `go build` in a test process), waiting without blocking
 * the event loop, until `deadline` (ms since the epoch).
 * @template T @param {string} dir @param {number} deadline @param {() => Promise<T>} work @returns {Promise<T>}
 */
export async function withBuildLockAsync(dir, deadline, work) {
  const lock = lockIn(dir);
  while (!tryTake(lock)) {
    if (Date.now() > deadline) throw new Error(`build: ${lock} is still held by another build`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

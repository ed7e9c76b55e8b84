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
 * Runs `work` holding `<dir>/.build-lock`: two starts at once (tests, a second terminal) would otherwise
 * both compile into dist/ while the first one's service is already loading it.
 * @param {string} dir @param {() => void} work
 */
export function withBuildLock(dir, work) {
  const lock = join(dir, '.build-lock');
  mkdirSync(dir, { recursive: true });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EEXIST') throw error;
      if (abandoned(lock)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`build: ${lock} is still held after ${WAIT_MS / 1000} s`);
      else sleep(POLL_MS);
    }
  }
  try {
    writeFileSync(join(lock, 'pid'), String(process.pid));
    work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

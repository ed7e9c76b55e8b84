import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A small file system of a test's own, which the test can fill to the last block and free again. */
export interface SmallTmpfs {
  /** Where it is mounted. */
  path: string;
  /** Bytes a non-root writer could still store. */
  bytesFree(): number;
  /**
   * Writes a filler file until the file system refuses (ENOSPC), in steps with pauses between, so
   * that whatever else writes there meets the full disk while it runs. Resolves with the bytes written.
   */
  fill(options?: { stepBytes?: number; pauseMs?: number }): Promise<number>;
  /** Deletes the filler: the space is back. */
  free(): void;
  /** Unmounts (lazily: files still open keep it until closed) and removes the mount point. */
  unmount(): Promise<void>;
}

/**
 * The mount is held by a guard process that unmounts when its stdin closes: when unmount() ends it,
 * or when this process dies in any way, kill -9 included, since the kernel then closes the pipe. The
 * guard has a session of its own and ignores SIGHUP, SIGINT and SIGTERM (and so does the `cat` it
 * runs), so a Ctrl-C that stops the test run cannot leave the mount behind. A private mount namespace
 * (`unshare --mount`) would be tidier but does not work here: the FerretDB under test runs in this
 * namespace, and SQLite resolves the `/proc/<pid>/root/...` path that would reach the other one back
 * to this namespace's "/" (it opens a different, non-existent directory).
 */
const GUARD = `
trap '' HUP INT TERM
mount -t tmpfs -o "size=$1,mode=0700" petstore-test-tmpfs "$2" || exit 1
echo mounted
cat >/dev/null
umount -l "$2"
rmdir "$2"
`;

const FILLER = 'filler';

/** Resolves once the guard has mounted; rejects with what mount said when it could not. */
function guardMounted(guard: ChildProcess): Promise<void> {
  let stderr = '';
  guard.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<void>((resolve, reject) => {
    guard.stdout?.once('data', () => resolve());
    guard.once('error', reject);
    guard.once('exit', (code) =>
      reject(
        new Error(
          'this test mounts a small tmpfs to fill it, which needs root (CAP_SYS_ADMIN), as in CI; ' +
            `mount said: ${stderr.trim() || `exit code ${code}`}`,
        ),
      ),
    );
  });
}

/** Mounts a tmpfs of `sizeBytes` on a fresh directory; rejects, saying why, where that is not allowed. */
export async function mountSmallTmpfs(sizeBytes: number): Promise<SmallTmpfs> {
  const path = mkdtempSync(join(tmpdir(), 'petstore-tmpfs-'));
  const guard = spawn('sh', ['-c', GUARD, 'sh', String(sizeBytes), path], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  try {
    await guardMounted(guard);
  } catch (error) {
    guard.stdin?.end();
    rmSync(path, { recursive: true, force: true });
    throw error;
  }
  const filler = join(path, FILLER);
  const exited = new Promise<void>((resolve) => {
    if (guard.exitCode !== null || guard.signalCode !== null) resolve();
    else guard.once('exit', () => resolve());
  });

  return {
    path,
    bytesFree() {
      const { bavail, bsize } = statfsSync(path);
      return bavail * bsize;
    },
    async fill({ stepBytes = 256 * 1024, pauseMs = 20 } = {}) {
      const file = await open(filler, 'a');
      let written = 0;
      try {
        // Big steps while there is room, then single blocks, so not one block is left over.
        for (const size of [stepBytes, 4096]) {
          const chunk = Buffer.alloc(size, 0x5a);
          for (;;) {
            try {
              written += (await file.write(chunk)).bytesWritten;
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
            if (size === stepBytes) await sleep(pauseMs);
          }
        }
      } finally {
        await file.close();
      }
      return written;
    },
    free() {
      rmSync(filler, { force: true });
    },
    async unmount() {
      guard.stdin?.end();
      await exited;
    },
  };
}

import { existsSync } from 'node:fs';

/** Something a suite needs from the machine, and how to get it. */
export interface Requirement {
  present: () => boolean;
  missing: string;
  fix: string;
}

/** A Debian package a suite starts for real, by the path CI's `apt-get install` puts it at. */
const debianTool = (path: string, aptPackage: string): Requirement & { path: string } => ({
  path,
  present: () => existsSync(path),
  missing: `${path} missing`,
  fix: `apt-get install -y ${aptPackage}`,
});

// Debian's chromium: playwright's own download needs internet we don't have.
export const CHROMIUM = debianTool('/usr/bin/chromium', 'chromium');
export const REDIS_SERVER = debianTool('/usr/bin/redis-server', 'redis-server');
export const HAPROXY = debianTool('/usr/sbin/haproxy', 'haproxy');
/** Mounting a tmpfs (CAP_SYS_ADMIN): CI runs as root. */
export const ROOT: Requirement = {
  present: () => process.getuid?.() === 0,
  missing: 'not root',
  fix: 'run the tests as root, as CI does, to mount a small tmpfs',
};

/**
 * Whether a suite can run here. Locally a missing requirement is a skip that says what to do (as a
 * missing Chromium is); in CI, which provides them (.ci/run), it is a failure, so a check can't vanish.
 */
export function requiring(...needs: Requirement[]): { skip: boolean; title(title: string): string } {
  const missing = needs.filter((need) => !need.present());
  const skip = missing.length > 0 && process.env.CI !== 'true';
  const why = missing.map((need) => `${need.missing}; ${need.fix}`).join('; ');
  return { skip, title: (title) => (skip ? `${title} (SKIPPED: ${why})` : title) };
}

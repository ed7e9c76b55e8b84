// @ts-check
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Written by `npm run build` once dist/ and .assets/ are built: the digest of the inputs they came from. */
export const STAMP_FILE = 'dist/.build-inputs';
/**
 * What dist/ and .assets/ are made from: the sources (src/static's asset code included), the compiler
 * settings, and the lock file, which pins TypeScript and the packages the assets are copied from.
 */
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

/** @param {string} path @returns {string[]} */
function filesUnder(path) {
  const entries = readdirSync(path, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
}

/** Contents, not modification times: a copy, a checkout or a `touch` of unchanged files is no change. */
export function inputsDigest(/** @type {string} */ root) {
  const files = INPUTS.flatMap((input) => {
    const path = join(root, input);
    return input.includes('.') ? [path] : filesUnder(path);
  }).sort();
  const hash = createHash('sha256');
  for (const file of files) {
    const content = readFileSync(file);
    hash.update(`${relative(root, file)}\0${content.length}\0`).update(content);
  }
  return hash.digest('hex');
}

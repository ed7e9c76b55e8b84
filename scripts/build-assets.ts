import { relative } from 'node:path';
import { buildAssets } from '../src/static/build-assets.ts';

const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(2)} MB`;

const result = await buildAssets({ force: process.argv.includes('--force') });
const where = relative(process.cwd(), result.dir) || '.';
if (!result.built) {
  console.log(`assets: ${where}/ up to date (key ${result.manifest.buildKey}), checked in ${result.milliseconds} ms`);
} else {
  const files = Object.values(result.manifest.files);
  const total = (coding: 'identity' | 'br' | 'gzip') =>
    files.reduce((sum, file) => sum + (file[coding] ?? file.identity).bytes, 0);
  console.log(
    `assets: built ${files.length} files into ${where}/ in ${(result.milliseconds / 1000).toFixed(1)} s: ` +
      `raw ${megabytes(total('identity'))}, br ${megabytes(total('br'))}, gz ${megabytes(total('gzip'))}`,
  );
}

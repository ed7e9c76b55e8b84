// Builds (or finds cached) the embedded FerretDB binary, so CI and first starts can time it separately.
import { buildFerretDb } from '../src/db/ferretdb.ts';

const started = Date.now();
const binary = await buildFerretDb((message) => console.log(message));
console.log(`embedded database ready: ${binary} (${((Date.now() - started) / 1000).toFixed(1)} s)`);

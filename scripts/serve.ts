// `node --import tsx scripts/serve.ts [--via=node]`: the compiled service through test/support/service-process.ts,
// for callers that are not TypeScript (.ci/fuzz-contract.sh). Once it listens, prints its origin as the
// one line on stdout; everything the service writes goes to stderr. SIGTERM or SIGINT stops it
// (SIGTERM, drained) and exits with its exit code; a service that dies makes this exit 1.
import { ServiceExitedError, startServiceProcess } from '../test/support/service-process.ts';

const via = process.argv.includes('--via=node') ? 'node' : 'npm';
// The caller's PORT, LOG_LEVEL or MONGODB_URI win over the helper's defaults, as with `npm start`.
const env = Object.fromEntries(
  Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
);

let stopping = false;
let stop = () => {
  stopping = true;
};
process.on('SIGTERM', () => stop());
process.on('SIGINT', () => stop());
const service = await startServiceProcess({ via, env, echo: 'all' }).catch((error: Error) => {
  const exited = error instanceof ServiceExitedError;
  console.error(`serve: ${exited ? `the service exited (${error.code}) before listening` : error.message}`);
  process.exit(1);
});
stop = () => {
  stopping = true;
  service.stop().then((code) => process.exit(code ?? 1));
};
service.child.once('exit', (code) => {
  if (!stopping) {
    console.error(`serve: the service exited on its own (${code})`);
    process.exit(1);
  }
});
// A signal that came while the service was starting stops it now.
if (stopping) stop();
else console.log(service.origin);

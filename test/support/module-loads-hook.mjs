// Loaded with `node --import`: writes each ES module the process loads as a `module-load <url>` line
// on stderr (written from the hooks thread straight to fd 2), so a test can tell when a module came in.
import { register } from 'node:module';

const hooks = `
import { writeSync } from 'node:fs';
export async function load(url, context, nextLoad) {
  writeSync(2, 'module-load ' + url + '\\n');
  return nextLoad(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

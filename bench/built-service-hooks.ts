// The resolve hook of built-service.ts: a module of src/ resolves to its compiled twin in dist/.

const SRC = new URL('../src/', import.meta.url).href;
const DIST = new URL('../dist/', import.meta.url).href;

type Resolved = { url: string; format?: string | null; shortCircuit?: boolean };
type NextResolve = (specifier: string, context: unknown) => Promise<Resolved>;

export async function resolve(specifier: string, context: unknown, nextResolve: NextResolve): Promise<Resolved> {
  const resolved = await nextResolve(specifier, context);
  if (!resolved.url.startsWith(SRC) || !resolved.url.endsWith('.ts')) return resolved;
  return { url: `${DIST}${resolved.url.slice(SRC.length, -'.ts'.length)}.js`, format: 'module', shortCircuit: true };
}

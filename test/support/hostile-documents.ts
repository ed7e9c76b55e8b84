/** GraphQL documents built to make a server's static analysis expand: shared by the adversarial suites. */
import { AUTH, type TestServer } from './test-server.ts';

/** `fragment F1 { ...F2 ...F2 }`, `F2 { ...F3 ...F3 }`, ...: `levels` fragments, 2^(levels-1) leaves once expanded. */
export function fragmentChain(levels: number, options: { on?: string; leaf?: string; root?: string } = {}): string {
  const { on = 'Query', leaf = '__typename', root = '...F1' } = options;
  const fragments = Array.from({ length: levels }, (_, index) => {
    const body = index + 1 < levels ? `...F${index + 2} ...F${index + 2}` : leaf;
    return `fragment F${index + 1} on ${on} { ${body} }`;
  });
  return [`query { ${root} }`, ...fragments].join('\n');
}

/** A chain under a field: graphql-jit's compiler expands each spread of a field's selection afresh. */
export const petFragmentChain = (levels: number) =>
  fragmentChain(levels, { on: 'Pet', leaf: 'id', root: 'pets { ...F1 }' });

/** A chain inside introspection, which GraphQL Armor's cost and depth rules do not count. */
export const introspectionChain = (levels: number) =>
  fragmentChain(levels, { on: '__Type', leaf: 'name', root: '__schema { types { ...F1 } }' });

/** `width` fragments in each of `levels` layers, each spreading every fragment of the next layer. */
export function fragmentFan(levels: number, width: number): string {
  const name = (level: number, index: number) => `L${level}x${index}`;
  const layer = (level: number) => Array.from({ length: width }, (_, index) => `...${name(level, index)}`).join(' ');
  const fragments: string[] = [];
  for (let level = 0; level < levels; level++) {
    const body = level + 1 < levels ? layer(level + 1) : '__typename';
    for (let index = 0; index < width; index++) fragments.push(`fragment ${name(level, index)} on Query { ${body} }`);
  }
  return [`query { ${layer(0)} }`, ...fragments].join('\n');
}

/** `count` copies of `text`, separated by spaces. */
export const repeated = (count: number, text: (index: number) => string) =>
  Array.from({ length: count }, (_, index) => text(index)).join(' ');

/** A document sent as a GraphQL-over-HTTP client that takes application/graphql-response+json would. */
export async function sendDocument(target: TestServer, query: string, extra: Record<string, unknown> = {}) {
  const started = performance.now();
  const response = await target.request
    .post('/graphql')
    .set({ ...AUTH, Accept: 'application/graphql-response+json' })
    .send({ query, ...extra });
  const elapsed = performance.now() - started;
  const body = JSON.parse(response.text) as {
    data?: unknown;
    errors?: { message: string; extensions?: { code?: string } }[];
  };
  return { status: response.status, body, elapsed };
}

/** A GraphQL request's parameters from a URL-encoded query string, or why they cannot be read. */
export type UrlParams = { ok: true; params: Record<string, unknown> } | { ok: false; message: string };

/** The parameters whose values are JSON (GraphQL over HTTP: URL-encoded JSON objects). */
const JSON_PARAMS = ['variables', 'extensions'] as const;

/**
 * Yoga's handleURLSearchParams (empty values are absent), with `documentId`, and without its throw:
 * Yoga calls JSON.parse on `variables` and `extensions` as they come, and a value that is not JSON
 * escapes its request parser as an unexpected error (500 and an error line). Here it is the client's
 * mistake, said in its words, for the edge to answer 400 before Yoga sees it.
 */
export function graphQLUrlParams(queryString: string): UrlParams {
  const search = new URLSearchParams(queryString);
  const params: Record<string, unknown> = {};
  for (const name of ['query', 'documentId', 'operationName']) {
    const value = search.get(name);
    if (value) params[name] = value;
  }
  for (const name of JSON_PARAMS) {
    const value = search.get(name);
    if (!value) continue;
    try {
      params[name] = JSON.parse(value);
    } catch {
      return { ok: false, message: `The "${name}" parameter is not valid JSON: send a URL-encoded JSON object` };
    }
  }
  return { ok: true, params };
}

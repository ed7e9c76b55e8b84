import { shouldRenderGraphiQL, type Plugin } from 'graphql-yoga';
import { unauthenticated } from '../graphql/errors.ts';
import type { ApiKeyVerifier } from './api-keys.ts';

/**
 * Refuses GraphQL requests without a valid key before Yoga reads or parses their body, so anonymous
 * callers cost us a header check and learn nothing of the schema. The context factory checks again:
 * it is what the REST adapter relies on. The GraphiQL page itself is public; its requests are not.
 */
export function useApiKeyAuth(options: { verifyApiKey: ApiKeyVerifier; graphqlEndpoint: string }): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (url.pathname !== options.graphqlEndpoint || shouldRenderGraphiQL(request)) return;
      const auth = options.verifyApiKey(request.headers.get('authorization'));
      if (auth.ok) return;
      const error = unauthenticated(auth.keyWasSent);
      const { headers } = error.extensions.http as { headers: Record<string, string> };
      endResponse(
        Response.json(
          { errors: [{ message: error.message, extensions: { code: error.extensions.code } }] },
          { status: 401, headers },
        ),
      );
    },
  };
}

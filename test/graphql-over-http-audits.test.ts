import { type AuditResult, serverAudits } from 'graphql-http';
import { describe, expect, it } from 'vitest';
import { API_KEY, type TestServerOptions, useTestServer } from './support/test-server.ts';

/**
 * Audits (by id) whose warning or notice is our choice, with why; empty while we pass every one. A
 * listed audit must keep its status: when it starts passing, or graphql-http drops it, the entry goes.
 */
const DELIBERATE_DEVIATIONS: Record<string, { status: Exclude<AuditResult['status'], 'ok'>; why: string }> = {};

/** Why an audit failed, with what the service answered (the audit may have read the body already). */
async function failureOf(result: Exclude<AuditResult, { status: 'ok' }>): Promise<string> {
  const body = await result.response.text().catch(() => '(body read by the audit)');
  return `${result.status}: ${result.reason}; HTTP ${result.response.status} ${body.slice(0, 500)}`;
}

// Under enforce too: API_KEYS' keys may still send any document, and the trusted-documents plugin
// sits on the path every one of these requests takes.
const modes: NonNullable<TestServerOptions['trustedDocuments']>[] = ['off', 'enforce'];

describe.each(modes)('GraphQL over HTTP (graphql-http server audits), TRUSTED_DOCUMENTS=%s', (trustedDocuments) => {
  const server = useTestServer({ trustedDocuments });
  const audits = serverAudits({
    url: () => `${server.baseUrl}/graphql`,
    fetchFn: (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      headers.set('Authorization', `Bearer ${API_KEY}`);
      return fetch(input, { ...init, headers });
    },
  });

  it('lists deviations only for audits that exist', () => {
    const ids = new Set(audits.map((audit) => audit.id));
    expect(Object.keys(DELIBERATE_DEVIATIONS).filter((id) => !ids.has(id))).toEqual([]);
  });

  for (const audit of audits) {
    it(audit.name, async () => {
      const result = await audit.fn();
      const deviation = DELIBERATE_DEVIATIONS[audit.id];
      if (deviation) {
        expect(result.status, `${audit.id} is listed as a deviation (${deviation.why})`).toBe(deviation.status);
        return;
      }
      expect(result.status, result.status === 'ok' ? '' : await failureOf(result)).toBe('ok');
    });
  }
});

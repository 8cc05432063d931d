import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedOperations } from '../helpers/documented-operations.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * README: a body's unknown field is refused by name, never ignored (`{…, "dryRun": true}` would
 * otherwise do for real what the caller meant to try). Every operation that reads a body, whether
 * or not the document describes one, answers so.
 */
let app: TestApp;
let key: string;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
});
afterAll(() => app?.stop());

const unknownFieldRefused = [400, 'VALIDATION_ERROR', [{ field: 'dryRun', issue: 'is not a field that can be set here' }]];
const outcomeOf = (response: { status: number; body: any }) => [
  response.status,
  response.body?.error?.code,
  (response.body?.error?.details?.issues ?? []).filter((issue: { field: string }) => issue.field === 'dryRun'),
];

describe('an unknown body field', () => {
  it('is refused by name on every POST, PUT and PATCH of the document', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const outcomes: Record<string, unknown> = {};
    for (const { method, template, path } of documentedOperations(document).filter(({ method }) => ['POST', 'PUT', 'PATCH'].includes(method))) {
      const response = await call(app.url, path, { method, apiKey: key, body: { dryRun: true } });
      outcomes[`${method} ${template}`] = outcomeOf(response);
    }
    expect(Object.keys(outcomes).length).toBeGreaterThan(15);
    expect(Object.entries(outcomes).filter(([, outcome]) => JSON.stringify(outcome) !== JSON.stringify(unknownFieldRefused))).toEqual([]);
  });

  it('is quoted whole when short, and cut to 64 characters and "…" when long, so long keys get a short answer', async () => {
    const organizationId = app.bootstrap.organizationId;
    const longKey = (i: number) => `unknown${i}-${'k'.repeat(5_000)}`;
    const longKeys = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [longKey(i), 1]));
    const refused = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Long keys', organizationId, ...longKeys } });
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([400, 'VALIDATION_ERROR', 'Request validation failed']);
    const issues = refused.body.error.details.issues;
    expect(issues).toHaveLength(101);
    expect(issues[0]).toEqual({ field: `${longKey(0).slice(0, 64)}…`, issue: 'is not a field that can be set here' });
    expect(issues.at(-1)).toEqual({ field: '(more)', issue: 'and 50 more issues like these' });
    expect(Buffer.byteLength(refused.text)).toBeLessThan(16_000);

    const exact = 'k'.repeat(64);
    const short = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Short keys', organizationId, dryRun: true, [exact]: 1 } });
    expect([short.status, short.body.error.details.issues]).toEqual([400, [
      { field: 'dryRun', issue: 'is not a field that can be set here' },
      { field: exact, issue: 'is not a field that can be set here' },
    ]]);
  });

  it('beside a revoke leaves the invitation pending instead of revoking it', async () => {
    const created = await call(app.url, '/api/customer-invitations', { apiKey: key, body: { organizationId: app.bootstrap.organizationId, email: 'kept-pending@invitee.test' } });
    expect(created.status, created.text).toBe(201);
    const { token } = created.body.data;
    const refused = await call(app.url, `/api/customer-invitations/${token}/revoke`, { apiKey: key, body: { dryRun: true } });
    expect(outcomeOf(refused)).toEqual(unknownFieldRefused);
    expect((await call(app.url, `/api/customer-invitations/${token}`)).body.data.status).toBe('pending');
    const revoked = await call(app.url, `/api/customer-invitations/${token}/revoke`, { apiKey: key, body: {} });
    expect([revoked.status, revoked.body.data?.status]).toEqual([200, 'revoked']);
  });
});

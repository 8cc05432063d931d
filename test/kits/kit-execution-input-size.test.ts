import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * An execution's business profile and discovery answers are stored with it and loaded by the
 * worker that runs it. They are bounded as PostgreSQL stores them, where a number has no exponent
 * form: `1e308`, 5 characters in the request, is stored and read back as 309 digits.
 */
let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const execute = (body: unknown) => call(app.url, `/api/${orgId}/kits/service-starter/execute`, { apiKey: key, body });
const refusal = (response: ApiResponse) => [response.status, response.body.error?.code, response.body.error?.details?.issues];

beforeAll(async () => {
  app = await startTestApp({ mode: 'all' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: sampleKit() })).status).toBe(201);
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Rockets' } })).body.data.id;
});
afterAll(() => app?.stop());

describe("an execution's inputs", () => {
  it('over their bound as stored are refused by field, and nothing is stored or queued', async () => {
    const body = sampleExecutionBody(projectId);
    const tooLarge = {
      // 1,000 × "1e308," is 6 KB of request and 310 KB stored.
      discoveryAnswers: [{ ...body, discoveryAnswers: { ...body.discoveryAnswers, readings: Array(1_000).fill(1e308) } }, 262_144],
      'discoveryAnswers of free text': [{ ...body, discoveryAnswers: { ...body.discoveryAnswers, transcript: 'x'.repeat(262_144) } }, 262_144],
      // 250 × "1e308," is 1.5 KB of request and 77 KB stored.
      businessProfile: [{ ...body, businessProfile: { ...body.businessProfile, readings: Array(250).fill(-1e308) } }, 65_536],
    } as const;
    for (const [what, [request, bound]] of Object.entries(tooLarge)) {
      const field = what.split(' ')[0];
      expect(refusal(await execute(request)), what).toEqual([400, 'VALIDATION_ERROR', [{ field, issue: `must be at most ${bound} bytes as JSON` }]]);
    }
    expect(await countRows(app.database.ownerUrl, 'kit_executions')).toBe(0);
    expect(await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'kits.execute'")).toBe(0);
  });

  it('within their bound are stored as sent, read back near the bound, and run', async () => {
    const body = sampleExecutionBody(projectId);
    const businessProfile = { ...body.businessProfile, readings: Array(200).fill(1e308) };
    const discoveryAnswers = { ...body.discoveryAnswers, transcript: 'Q: Who books a launch?\nA: Research teams.\n'.repeat(5_000), numbers: [1e308, -5e-324, 123.456] };
    const started = await execute({ ...body, businessProfile, discoveryAnswers });
    expect(started.status, started.text).toBe(201);
    const [row] = await sqlAsOwner(
      `select input->'businessProfile' = $2::jsonb and input->'discoveryAnswers' = $3::jsonb as as_sent,
              octet_length((input->'businessProfile')::text) as profile_bytes, octet_length((input->'discoveryAnswers')::text) as answers_bytes
         from kit_executions where id = $1`,
      [started.body.data.executionId, JSON.stringify(businessProfile), JSON.stringify(discoveryAnswers)],
    );
    // Counted as PostgreSQL writes jsonb back (a space after each ':' and ','): within the bound.
    expect(row.as_sent).toBe(true);
    expect(row.profile_bytes).toBeLessThanOrEqual(65_536);
    expect(row.answers_bytes).toBeLessThanOrEqual(262_144);
    expect((await waitForExecution(app.url, key, orgId, started.body.data.executionId)).status).toBe('completed');
  });
});

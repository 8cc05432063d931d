import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { recordedResponses } from '../helpers/response-log.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const TOKEN = 'ghp_rejoined-by-cleaning-4242';
const PASSPHRASE = 'correct horse battery staple';

let app: TestApp;
let key: string;
let orgId: string;
let projectId: string;

// Every line a kit reports is made one line without control characters. A secret the kit split with
// a control character, or whose words it put on lines of their own, reads whole once cleaned.
const applyHook = `
var token;
function apply(context, kit) {
  token = context.credentials.deploy.token;
  kit.log('info', 'soh ' + token.slice(0, 6) + '\\u0001' + token.slice(6));
  kit.log('info', 'nul ' + token.slice(0, 6) + '\\u0000' + token.slice(6));
  kit.log('info', 'cr ' + token.slice(0, 6) + '\\r' + token.slice(6));
  kit.log('info', 'words ' + context.credentials.deploy.passphrase.split(' ').join('\\n'));
  return { applied: true };
}
`;
const verifyHook = `
function verify() {
  return { warnings: ['esc ' + token.slice(0, 6) + '\\u001b' + token.slice(6)], errors: [] };
}
`;

beforeAll(async () => {
  app = await startTestApp({ mode: 'all' });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  const kit = sampleKit({ id: 'splitting-deployer', credentials: [{ id: 'deploy', description: 'Deploy token', required: true }], applyHook });
  kit.files['hooks/verify.js'] = verifyHook;
  const published = await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit });
  expect(published.status, published.text).toBe(201);
  projectId = (await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Split secrets' } })).body.data.id;
  const stored = await call(app.url, `/api/${orgId}/kits/credentials`, {
    apiKey: key,
    body: { projectId, kitId: 'splitting-deployer', credentialType: 'deploy', credentials: { token: TOKEN, passphrase: PASSPHRASE } },
  });
  expect(stored.status, stored.text).toBe(201);
});
afterAll(() => app?.stop());

describe('a kit secret split by characters that cleaning removes', () => {
  it('is redacted from the log lines and VERIFY warnings an execution answers and stores', async () => {
    const started = await call(app.url, `/api/${orgId}/kits/splitting-deployer/execute`, { apiKey: key, body: sampleExecutionBody(projectId) });
    expect(started.status, started.text).toBe(201);
    const execution = await waitForExecution(app.url, key, orgId, started.body.data.executionId);
    expect(execution.status, execution.errorMessage).toBe('completed');

    expect(execution.logs.filter((entry: { phase: string }) => entry.phase === 'APPLY')).toEqual([
      { phase: 'APPLY', level: 'info', message: 'soh [redacted]' },
      { phase: 'APPLY', level: 'info', message: 'nul [redacted]' },
      { phase: 'APPLY', level: 'info', message: 'cr [redacted]' },
      { phase: 'APPLY', level: 'info', message: 'words [redacted]' },
    ]);
    expect(execution.verifyWarnings).toEqual(['esc [redacted]']);

    const [row] = await ownerQuery(app.database.ownerUrl, 'select logs::text, verify_warnings::text, coalesce(error_message, \'\') as error_message from kit_executions where id = $1', [execution.id]);
    for (const secret of [TOKEN, PASSPHRASE]) {
      expect(Object.values(row).filter((stored) => String(stored).includes(secret))).toEqual([]);
      expect(recordedResponses.filter((response) => response.text.includes(secret)).map((response) => response.path)).toEqual([]);
      expect(app.rawLog.filter((line) => line.includes(secret))).toEqual([]);
    }
  });
});

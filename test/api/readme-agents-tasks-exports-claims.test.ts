import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { compiledSpecification } from '../helpers/compiled-specification.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Claims of README.md ("Export packs", "Agents", "Tasks") and of control-plane/README.md's glossary
 * that no other test holds, checked against the real service over HTTP.
 */
let app: TestApp;
let apiKey: string;
let orgId: string;
let walk: ReturnType<typeof flowWalker>;

const COMPILATION_PER_MINUTE = 1000;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key, body });
const get = (path: string, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key });

const compiled = (projectId: string, options: Record<string, unknown> = {}) => compiledSpecification(app, apiKey, projectId, options);

async function settled(executionId: string) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const response = await get(`/agents/execution/${executionId}/status`);
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'running') return response.body.data;
  }
  throw new Error('the agent execution did not settle within 30 s');
}

async function unzipped(url: string, init: RequestInit = {}) {
  const response = await fetch(`${app.url}${url}`, init);
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { response, bytes, files: response.status === 200 ? unzipSync(bytes) : {} };
}

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_COMPILATION_PER_MINUTE: String(COMPILATION_PER_MINUTE), RATE_LIMIT_AGENT_PER_MINUTE: '1000' } });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
}, 120_000);
afterAll(() => app?.stop());

describe('export packs', () => {
  let projectId: string;
  let specId: string;
  beforeAll(async () => {
    projectId = await walk.finishedProject('Claims clinic');
    specId = (await compiled(projectId, { includeTestPlan: false })).id;
  }, 120_000);

  it('are counted in the compilation class, and the link lasts 15 minutes', async () => {
    const before = Date.now();
    const exported = await post('/exports/download', { projectId, format: 'json' });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.headers.get('x-ratelimit-limit')).toBe(String(COMPILATION_PER_MINUTE));
    const lasts = Date.parse(exported.body.data.expiresAt) - before;
    expect(lasts).toBeGreaterThan(14 * 60_000);
    expect(lasts).toBeLessThanOrEqual(15 * 60_000 + 5_000);
  });

  it("list each file's size and sha256 in manifest.json, first in the ZIP", async () => {
    const exported = await post('/exports/download', { projectId, format: 'json', include: { dod: true, testPlan: true, mcpConfig: true } });
    const { bytes, files } = await unzipped(exported.body.data.downloadUrl);
    expect(Object.keys(files)[0]).toBe('manifest.json');
    const manifest = JSON.parse(strFromU8(files['manifest.json']!));
    expect(manifest.files.length).toBe(4);
    for (const file of manifest.files as Array<{ name: string; sizeBytes: number; sha256: string }>) {
      const content = files[file.name]!;
      expect(file.sizeBytes, file.name).toBe(content.length);
      expect(file.sha256, file.name).toBe(createHash('sha256').update(content).digest('hex'));
    }
    expect(bytes.length).toBe(exported.body.data.size);
  });

  it('say "a review" is what shows a requirement done when the plan has no test cases, and what holds for the whole product', async () => {
    const exported = await post('/exports/download', { projectId, specId, format: 'json', include: { spec: false, dod: true } });
    expect(exported.body.data.contents).toEqual(['manifest.json', 'definition-of-done.json']);
    const dod = JSON.parse(strFromU8((await unzipped(exported.body.data.downloadUrl)).files['definition-of-done.json']!));
    expect(dod.requirements.length).toBeGreaterThan(0);
    for (const requirement of dod.requirements) expect(requirement.doneWhen).toEqual(['A review confirms it']);
    expect(dod.overall[0]).toBe('Every "must" requirement is done');
    expect(dod.overall).not.toContain('Every test case of the test plan passes');
  });

  it('keep mcp.json as JSON in a Markdown pack, with placeholders for the URL and a key', async () => {
    const exported = await post('/exports/download', { projectId, format: 'markdown', include: { mcpConfig: true } });
    expect(exported.body.data.contents).toEqual(['manifest.json', 'SPEC.md', 'mcp.json']);
    const mcp = JSON.parse(strFromU8((await unzipped(exported.body.data.downloadUrl)).files['mcp.json']!));
    expect(mcp).toEqual({
      mcpServers: { specwright: { command: 'npx', args: ['specwright', 'tool-server'], env: { SPECWRIGHT_URL: expect.stringMatching(/^</), SPECWRIGHT_API_KEY: expect.stringMatching(/^</) } } },
    });
  });

  it('are an mcp pack even of nothing else, since it always holds mcp.json', async () => {
    const exported = await post('/exports/download', { projectId, format: 'mcp', include: { spec: false } });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.data.contents).toEqual(['manifest.json', 'mcp.json', 'README.md']);
  });

  it('serve byte ranges of the ZIP as kit bundles do', async () => {
    const exported = await post('/exports/download', { projectId, format: 'json' });
    const whole = await unzipped(exported.body.data.downloadUrl);
    const part = await fetch(`${app.url}${exported.body.data.downloadUrl}`, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-9/${whole.bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(Buffer.from(whole.bytes.subarray(0, 10)))).toBe(true);
  });

  it('serve a link only while the API key that asked for it is active', async () => {
    const created = await post('/developer/api-keys', { name: 'exporter' });
    expect(created.status, created.text).toBe(201);
    const link = (await post('/exports/download', { projectId, format: 'json' }, created.body.data.key)).body.data.downloadUrl;
    expect((await unzipped(link)).response.status).toBe(200);
    expect((await call(app.url, `/api/developer/api-keys/${created.body.data.id}`, { apiKey, method: 'DELETE' })).status).toBe(200);
    const refused = await call(app.url, link);
    expect([refused.status, refused.body.error?.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('are for customers too: a customer assigned the project gets a link that serves', async () => {
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Exporting customer');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, orgId, customer.userId]);
    expect((await post('/agency-projects', { organizationId: orgId, projectId, customerUserId: customer.userId })).status).toBe(201);
    const exported = await post('/exports/download', { projectId, format: 'json' }, customer.apiKey);
    expect(exported.status, exported.text).toBe(200);
    expect((await unzipped(exported.body.data.downloadUrl)).response.status).toBe(200);
  });

  it('refuse a specId naming a specification that is not completed (CONFLICT)', async () => {
    const [failed] = await sqlAsOwner(
      `insert into specifications (tenant_id, project_id, version, options, input, status, error_message) values ($1, $2, 99, '{}', '{}', 'failed', 'The compile failed') returning id`,
      [app.bootstrap.tenantId, projectId],
    );
    const refused = await post('/exports/download', { projectId, specId: failed.id, format: 'json' });
    expect([refused.status, refused.body.error.code], refused.text).toEqual([409, 'CONFLICT']);
    // The latest completed one is still what a pack without specId holds.
    expect((await post('/exports/download', { projectId, format: 'json' })).body.data.specId).toBe(specId);
  });

  it("hold the agents' specification when it is the latest completed one", async () => {
    const started = await post('/agents/generate-spec', { projectId, options: { agents: ['designer'] } });
    expect(started.status, started.text).toBe(202);
    const done = await settled(started.body.data.executionId);
    expect(done.status).toBe('completed');
    const exported = await post('/exports/download', { projectId, format: 'json' });
    expect(exported.body.data.specId).toBe(done.result.specId);
    const spec = JSON.parse(strFromU8((await unzipped(exported.body.data.downloadUrl)).files['spec.json']!));
    expect(spec.metadata.draftedBy).toBeDefined();
  });
});

describe('agents', () => {
  it("list memory's sessions by execution and then in the order of the plan, whichever call of a parallel wave answered first", async () => {
    const { projectId } = await walk.startedProject('Memory order');
    const started = await post('/agents/generate-spec', { projectId, options: { strategy: 'hierarchical', agents: ['architect', 'analyst'] } });
    const done = await settled(started.body.data.executionId);
    expect(done.status).toBe('completed');
    const memory = await get(`/agents/memory?sessionId=${done.executionId}`);
    expect(memory.body.data.sessions.map((session: { agentName: string }) => session.agentName)).toEqual(['supervisor', 'architect', 'analyst']);
  });

  it('have no POST /agents/coordinate', async () => {
    const coordinate = await post('/agents/coordinate', {});
    expect([coordinate.status, coordinate.body.error?.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe('tasks', () => {
  const choose = { type: 'SINGLE_SELECT', label: 'Pick a database', config: { options: [{ value: 'postgres', label: 'PostgreSQL' }] } };
  const newTask = async (projectId: string, extra: Record<string, unknown> = {}) => {
    const created = await post('/tasks', { projectId, type: 'DECIDE', title: 'Decide', description: 'A decision', actions: [choose], ...extra });
    expect(created.status, created.text).toBe(201);
    return created.body.data;
  };

  it('bind a single select as the action id when it names no field', async () => {
    const task = await newTask(await walk.newProject('Unnamed field'));
    const submitted = await post(`/tasks/${task.id}/actions/a1`, { data: { value: 'postgres' } });
    expect(submitted.body.data.effects.outputBindings).toEqual([{ field: 'a1', value: 'postgres' }]);
  });

  it('stay blocked until every dependency completes, not only one', async () => {
    const projectId = await walk.newProject('Two dependencies');
    const first = await newTask(projectId);
    const second = await newTask(projectId);
    const waiting = await newTask(projectId, { dependencies: [first.id, second.id] });
    expect(waiting.status).toBe('blocked');
    await post(`/tasks/${first.id}/actions/a1`, { data: { value: 'postgres' } });
    const blocked = await post(`/tasks/${waiting.id}/actions/a1`, { data: { value: 'postgres' } });
    expect([blocked.status, blocked.body.error.message]).toEqual([409, `The task waits for ${second.id} to complete`]);
    await post(`/tasks/${second.id}/actions/a1`, { data: { value: 'postgres' } });
    expect((await get(`/tasks?projectId=${projectId}&status=pending`)).body.data.tasks.map((task: { id: string }) => task.id)).toEqual([waiting.id]);
  });

  it("user-tasks lists the tasks assigned to the caller, counting blocked ones as pending", async () => {
    const projectId = await walk.newProject('Mine');
    const before = (await get('/user-tasks')).body.data;
    const mine = await newTask(projectId, { assigneeType: 'user', assigneeId: app.bootstrap.userId });
    await newTask(projectId, { dependencies: [mine.id], assigneeType: 'user', assigneeId: app.bootstrap.userId });
    await newTask(projectId); // made by the caller, assigned to no one: not theirs
    await newTask(projectId, { assigneeType: 'agent', assigneeId: 'supervisor' });
    const after = (await get('/user-tasks')).body.data;
    expect(after.total - before.total).toBe(2);
    expect(after.counts.pending - before.counts.pending).toBe(2);
  });

  it('take a due date with an offset of at most ±14:00, in the years 1 to 9999', async () => {
    const projectId = await walk.newProject('Due dates');
    expect((await newTask(projectId, { dueDate: '2030-01-01T00:00:00+14:00' })).dueDate).toBe('2029-12-31T10:00:00.000Z');
    expect((await newTask(projectId, { dueDate: '9999-12-31T00:00:00Z' })).dueDate).toBe('9999-12-31T00:00:00.000Z');
    const refused = await post('/tasks', { projectId, type: 'DECIDE', title: 'T', description: 'D', actions: [choose], dueDate: '2030-01-01T00:00:00+14:30' });
    expect([refused.status, refused.body.error.details.issues[0].field]).toEqual([400, 'dueDate']);
  });
});

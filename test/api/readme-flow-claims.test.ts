import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { waitForExecution } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Claims of README.md ("Flow (guided discovery)", "Specifications", the MCP tool server) and of
 * control-plane/README.md's glossary that no other test holds, checked against the real service.
 */
let app: TestApp;
let apiKey: string;
let orgId: string;
let walk: ReturnType<typeof flowWalker>;
const clients: Client[] = [];

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

async function questionsOf(projectId: string, phase: string) {
  const listed = await walk.get(`/flow/questions/${projectId}?phase=${phase}`);
  expect(listed.status, listed.text).toBe(200);
  return listed.body.data.questions as Array<{ id: string; key: string; options: Array<{ value: string }>; prefill: { value: unknown; confidence: number; source: string } | null }>;
}

async function forward(projectId: string, targetPhase: string) {
  const moved = await walk.post('/flow/transition', { projectId, targetPhase, force: true });
  expect(moved.status, moved.text).toBe(200);
  return moved.body.data;
}

async function compiled(specId: string) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const response = await walk.get(`/specification/${specId}`);
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'compiling') return response.body.data;
  }
  throw new Error('the specification did not compile within 30 s');
}

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_COMPILATION_PER_MINUTE: '100' } });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await app?.stop();
});

describe('prefills (README: "defaults for accessibility and the specification format")', () => {
  it('guesses accessibility, the specification format and the test plan by default, yet a compile with none answered is v1 without test cases', async () => {
    const { projectId } = await walk.startedProject('Defaults only');
    for (const phase of ['FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY']) await forward(projectId, phase);
    const accessibility = (await questionsOf(projectId, 'VISUAL_DISCOVERY')).find((question) => question.key === 'accessibility')!;
    expect(accessibility.prefill).toMatchObject({ value: 'wcag_aa', confidence: 0.5, source: 'default' });

    await forward(projectId, 'SPECIFICATION');
    const byKey = new Map((await questionsOf(projectId, 'SPECIFICATION')).map((question) => [question.key, question]));
    expect(byKey.get('specFormat')!.prefill).toMatchObject({ value: 'v2', confidence: 0.5, source: 'default' });
    // Not in the README's list of defaults, but offered all the same.
    expect(byKey.get('includeTestPlan')!.prefill).toMatchObject({ value: true, confidence: 0.6, source: 'default' });

    // "format — the specFormat answer unless options.format says otherwise, v1 by default": the guess is not the answer.
    const queued = await walk.post('/specification/compile', { projectId });
    expect(queued.status, queued.text).toBe(202);
    const specification = await compiled(queued.body.data.specId);
    expect(specification.status).toBe('completed');
    expect(specification.spec.metadata).toMatchObject({ format: 'v1', compiledFromPhase: 'SPECIFICATION' });
    expect(specification.spec.testCases).toEqual([]);

    // SPECIFICATION is the last phase: any target is PHASE_INVALID, with no phase allowed.
    const past = await walk.post('/flow/transition', { projectId, targetPhase: 'SPECIFICATION', force: true });
    expect([past.status, past.body.error?.code, past.body.error?.details?.allowedTargetPhase]).toEqual([400, 'PHASE_INVALID', null]);
  }, 60_000);

  it('raises PCI DSS on the compliance question when payments are among the capabilities (effects.prefillCascades)', async () => {
    const { projectId, id } = await walk.startedProject('Takes payments');
    const answered = await walk.answer(projectId, id('capabilities'), ['payments', 'accounts']);
    expect(answered.effects.prefillCascades).toEqual([{ questionId: id('compliance'), newConfidence: 0.7 }]);
    const compliance = (await questionsOf(projectId, 'DISCOVERY')).find((question) => question.key === 'compliance')!;
    expect(compliance.prefill).toMatchObject({ value: ['pci'], confidence: 0.7, source: 'discovery.capabilities' });
  });
});

describe('feature candidates (glossary: "derived from the discovery answers")', () => {
  it('offers a public API to developers as users, on the web alone, and counts it as a pattern', async () => {
    const { projectId, id } = await walk.startedProject('For developers');
    await walk.answer(projectId, id('audience'), ['developers']);
    await walk.answer(projectId, id('platforms'), ['web']);
    await walk.answer(projectId, id('entities'), 'widget');
    const entered = await forward(projectId, 'FEATURE_SELECTION');
    const features = (await questionsOf(projectId, 'FEATURE_SELECTION')).find((question) => question.key === 'features')!;
    expect(features.options.map((option) => option.value)).toEqual(['public-api', 'manage-widget']);
    expect(entered.entryActions.featureCandidatesGenerated).toBe(2);
    await walk.answer(projectId, features.id, ['public-api']);
    expect((await forward(projectId, 'PLAN_GENERATION')).entryActions.patternsMatched).toBe(1);
  });
});

describe('a kit execution given a specificationId', () => {
  it('is CONFLICT for a failed specification of the project (as while it compiles), and writes no execution', async () => {
    const { projectId } = await walk.startedProject('Failed specification');
    const [failed] = await sqlAsOwner(
      `insert into specifications (tenant_id, project_id, version, options, input, status, error_message) values ($1, $2, 1, '{}', '{}', 'failed', 'The compile failed') returning id`,
      [app.bootstrap.tenantId, projectId],
    );
    const refused = await walk.post(`/${orgId}/kits/openapi-api/execute`, { projectId, businessProfile: { company: { name: 'Clinic Co', industry: 'health' } }, specificationId: failed.id, options: { dryRun: true } });
    expect([refused.status, refused.body.error.code], refused.text).toEqual([409, 'CONFLICT']);
    expect(await sqlAsOwner('select id from kit_executions where project_id = $1', [projectId])).toEqual([]);
  });

  it("takes the specification's entities unless discoveryAnswers names its own, keeping the other answers it was given", async () => {
    const { projectId, id } = await walk.startedProject('Own entities win');
    await walk.answer(projectId, id('entities'), 'clinic, patient');
    const specId = (await walk.post('/specification/compile', { projectId })).body.data.specId;
    expect((await compiled(specId)).status).toBe('completed');
    const execute = (discoveryAnswers: Record<string, unknown>) =>
      walk.post(`/${orgId}/kits/openapi-api/execute`, { projectId, businessProfile: { company: { name: 'Clinic Co', industry: 'health' } }, specificationId: specId, discoveryAnswers, options: { dryRun: true } });
    const inputOf = async (response: Awaited<ReturnType<typeof execute>>) => {
      expect(response.status, response.text).toBe(201);
      await waitForExecution(app.url, apiKey, orgId, response.body.data.executionId, 30_000);
      const [row] = await sqlAsOwner('select input from kit_executions where id = $1', [response.body.data.executionId]);
      return row.input.discoveryAnswers;
    };
    const own = [{ name: 'widget', fields: [{ name: 'id', type: 'uuid', required: true }], operations: ['list'] }];
    expect((await inputOf(await execute({ entities: own }))).entities).toEqual(own);
    const merged = await inputOf(await execute({ industry: 'health' }));
    expect(merged.industry).toBe('health');
    expect(merged.entities.map((entity: { name: string }) => entity.name)).toEqual(['clinic', 'patient']);
  }, 90_000);
});

describe('the tool server (README: "move_flow to the next phase when ready — no force")', () => {
  it('refuses force on move_flow by name, and the project stays where it was', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['sdk/cli/bin.mjs', 'tool-server'],
      env: { PATH: process.env.PATH!, SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: apiKey },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'readme-flow-claims', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const { projectId } = await walk.startedProject('No force from an assistant');
    const forced = (await client.callTool({ name: 'move_flow', arguments: { projectId, targetPhase: 'FEATURE_SELECTION', force: true } })) as CallToolResult;
    expect(forced.isError).toBe(true);
    expect(forced.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')).toMatch(/Unrecognized key: "force"/);
    expect((await walk.get(`/projects/${projectId}`)).body.data.phase).toBe('DISCOVERY');
  });
});

import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The tool server coding assistants start (`specwright tool-server`, MCP over stdio), driven by the
 * MCP SDK's own client as an assistant would, against the real service and worker.
 */
const BIN = 'sdk/cli/bin.mjs';
let app: TestApp;
let key: string;
let orgId: string;
const opened: Array<{ client: Client; stderr: () => string }> = [];

/** A tool server started as an assistant starts it, with `env` as its whole environment (PATH aside). */
async function connect(env: Record<string, string>) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'tool-server'], env: { PATH: process.env.PATH!, ...env }, stderr: 'pipe' });
  let said = '';
  transport.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
  const client = new Client({ name: 'tool-server-test', version: '1.0.0' });
  await client.connect(transport);
  const server = { client, stderr: () => said };
  opened.push(server);
  return server;
}

const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const textOf = (result: CallToolResult) => result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

/** The data a tool answered, or the test fails saying what the tool said instead. */
async function data(client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const result = await callTool(client, name, args);
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** Runs the tool server as a command with no client, to its exit: its code and what it wrote. */
function runCommand(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH!, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdin.end();
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
});
afterAll(async () => {
  await Promise.all(opened.map(({ client }) => client.close()));
  await app?.stop();
});

describe('specwright tool-server', () => {
  it('offers the tools an assistant needs, reads marked read-only', async () => {
    const { client } = await connect({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: key });
    expect(client.getServerVersion()?.name).toBe('specwright');
    const { tools } = await client.listTools();
    const readOnly = Object.fromEntries(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint]));
    expect(readOnly).toEqual({
      whoami: true,
      list_organizations: true,
      list_projects: true,
      get_project: true,
      create_project: false,
      start_flow: false,
      next_question: true,
      answer_question: false,
      list_flow_questions: true,
      check_readiness: true,
      move_flow: false,
      compile_specification: false,
      get_specification: true,
      generate_spec_with_agents: false,
      get_agent_execution: true,
      resume_agent_execution: false,
      list_tasks: true,
      my_tasks: true,
      submit_task_action: false,
      list_kits: true,
      get_kit: true,
      execute_kit: false,
      list_executions: true,
      get_execution: true,
      get_output: true,
    });
    expect(tools.find((tool) => tool.name === 'execute_kit')?.inputSchema.required).toEqual(['orgId', 'kitId', 'projectId', 'businessProfile']);
    // What the assistant reads is what the service takes: no other field, and its paging bounds and filters.
    for (const tool of tools.filter(({ name }) => name !== 'whoami')) expect([tool.name, tool.inputSchema.additionalProperties]).toEqual([tool.name, false]);
    const listProjects = tools.find((tool) => tool.name === 'list_projects')!.inputSchema.properties as Record<string, any>;
    expect(listProjects.limit).toMatchObject({ minimum: 1, maximum: 200 });
    expect(listProjects.offset).toMatchObject({ minimum: 0 });
    expect(listProjects.status.enum).toEqual(['active', 'completed', 'archived', 'all']);
    expect(Object.keys(tools.find((tool) => tool.name === 'create_project')!.inputSchema.properties!)).toContain('organizationId');
  });

  it("refuses a field a tool does not take, by name, instead of dropping it and doing something else", async () => {
    const { client } = await connect({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: key });
    const project = await data(client, 'create_project', { name: 'Strict inputs', organizationId: orgId });
    expect(project.organizationId).toBe(orgId);
    const executions = async () => (await call(app.url, `/api/${orgId}/kits/executions?limit=200`, { apiKey: key })).body.data.total;
    const before = await executions();
    // The API's own shape for a dry run: dropped, the kit ran with its APPLY step.
    const example = JSON.parse(await readFile('kits/openapi-api/examples/acme-rockets.json', 'utf8'));
    const asOnTheApi = await callTool(client, 'execute_kit', { orgId, kitId: 'openapi-api', projectId: project.id, businessProfile: example.businessProfile, options: { dryRun: true } });
    expect(asOnTheApi.isError).toBe(true);
    expect(textOf(asOnTheApi)).toMatch(/Unrecognized key: "options"/);
    expect(await executions()).toBe(before);

    const projects = async () => (await call(app.url, '/api/projects?limit=200&status=all', { apiKey: key })).body.data.total;
    const projectsBefore = await projects();
    const misspelled = await callTool(client, 'create_project', { name: 'Elsewhere', orgId });
    expect(misspelled.isError).toBe(true);
    expect(textOf(misspelled)).toMatch(/Unrecognized key: "orgId"/);
    expect(await projects()).toBe(projectsBefore);
  });

  it('acts as the API key: creates a project, runs a built-in kit on it and reads the file it generated', async () => {
    const { client, stderr } = await connect({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: key });
    expect(await data(client, 'whoami')).toMatchObject({ userId: app.bootstrap.userId, tenantId: app.bootstrap.tenantId, authenticatedBy: 'api_key' });
    expect((await data(client, 'list_organizations')).organizations.map((org: { id: string }) => org.id)).toContain(orgId);

    const project = await data(client, 'create_project', { name: 'Rocket tracker', description: 'Tracks launches' });
    expect(project).toMatchObject({ name: 'Rocket tracker', status: 'active', phase: 'CREATED' });
    // What the tool created is the service's: the REST surface reads it back.
    expect((await call(app.url, `/api/projects/${project.id}`, { apiKey: key })).body.data).toMatchObject({ id: project.id, description: 'Tracks launches' });
    expect((await data(client, 'list_projects', { limit: 200 })).projects.map((p: { id: string }) => p.id)).toContain(project.id);
    expect(await data(client, 'get_project', { projectId: project.id })).toMatchObject({ id: project.id, progress: { overall: expect.any(Number) } });

    expect((await data(client, 'list_kits', { orgId, limit: 200 })).kits.map((kit: { kitId: string }) => kit.kitId)).toContain('openapi-api');
    const kit = await data(client, 'get_kit', { orgId, kitId: 'openapi-api' });
    expect(kit.manifest.inputs.required).toContain('discoveryAnswers.entities');
    const example = JSON.parse(await readFile('kits/openapi-api/examples/acme-rockets.json', 'utf8'));
    const started = await data(client, 'execute_kit', { orgId, kitId: 'openapi-api', projectId: project.id, businessProfile: example.businessProfile, discoveryAnswers: example.discoveryAnswers, dryRun: true });
    expect(started).toMatchObject({ status: 'pending' });
    let execution = await data(client, 'get_execution', { orgId, executionId: started.executionId });
    for (const deadline = Date.now() + 30_000; ['pending', 'running'].includes(execution.status) && Date.now() < deadline; ) {
      await sleep(100);
      execution = await data(client, 'get_execution', { orgId, executionId: started.executionId });
    }
    expect(execution, execution.errorMessage).toMatchObject({ status: 'completed', options: { dryRun: true } });
    const document = execution.outputs.find((output: { filename: string }) => output.filename.endsWith('openapi.yaml'));
    expect(document, JSON.stringify(execution.outputs.map((o: { filename: string }) => o.filename))).toBeDefined();
    expect((await data(client, 'list_executions', { orgId, projectId: project.id, kitId: 'openapi-api' })).executions.map((run: { id: string }) => run.id)).toEqual([started.executionId]);

    // The file comes as it is, after its metadata: a YAML document reads as YAML, not as one escaped string.
    const read = await callTool(client, 'get_output', { orgId, executionId: started.executionId, outputId: document.outputId });
    expect(read.isError, textOf(read)).toBeFalsy();
    const [about, content] = read.content.map((part) => (part.type === 'text' ? part.text : ''));
    expect(JSON.parse(about!)).toMatchObject({ filename: document.filename, status: 'valid', validationErrors: [] });
    expect(JSON.parse(about!)).not.toHaveProperty('content');
    expect(content).toMatch(/^openapi: ["']?3\.1/m);
    // Text only: a client that hands the model the structured content instead (Claude Code does) would show the file as one escaped string.
    expect(read.structuredContent).toBeUndefined();
    expect(stderr()).toBe('');
  }, 60_000);

  it("walks a project's discovery: starts it, answers each question it is asked, and moves it on when ready", async () => {
    const { client, stderr } = await connect({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: key });
    const project = await data(client, 'create_project', { name: 'Booking site', description: 'Online bookings for clinics' });
    const started = await data(client, 'start_flow', { projectId: project.id });
    expect(started).toMatchObject({ phase: 'DISCOVERY', firstQuestion: { key: 'problem', prefill: { value: 'Online bookings for clinics' } } });
    const early = await callTool(client, 'move_flow', { projectId: project.id, targetPhase: 'FEATURE_SELECTION' });
    expect(early.isError).toBe(true);
    expect(textOf(early)).toMatch(/^READINESS_FAILED: /);

    const answers: Record<string, unknown> = { audience: ['businesses'], platforms: ['web'], capabilities: ['scheduling'], entities: 'clinic, booking', integrations: 'Google Calendar', compliance: ['gdpr'], scale: 'small' };
    const refused = await callTool(client, 'answer_question', { projectId: project.id, questionId: started.firstQuestion.id, value: ['not', 'text'] });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^VALIDATION_ERROR: .+\n- answer\.value: must be a string/);
    for (let next = await data(client, 'next_question', { projectId: project.id }); next.question; next = await data(client, 'next_question', { projectId: project.id })) {
      const { question } = next;
      await data(client, 'answer_question', { projectId: project.id, questionId: question.id, value: answers[question.key] ?? question.prefill.value, confidence: 0.9 });
    }
    expect(await data(client, 'check_readiness', { projectId: project.id })).toMatchObject({ currentPhase: 'DISCOVERY', isReady: true, blockers: [] });
    const asked = await data(client, 'list_flow_questions', { projectId: project.id, phase: 'DISCOVERY' });
    expect(asked.questions.find((question: { key: string }) => question.key === 'entities').answer).toMatchObject({ value: 'clinic, booking', confidence: 0.9 });
    // bookings, organizations (multi-tenant, as business users suggested), audit-log (GDPR), manage-clinic, manage-booking.
    expect(await data(client, 'move_flow', { projectId: project.id, targetPhase: 'FEATURE_SELECTION' })).toMatchObject({ currentPhase: 'FEATURE_SELECTION', entryActions: { featureCandidatesGenerated: 5 } });
    // The service holds what the assistant did.
    expect((await call(app.url, `/api/projects/${project.id}`, { apiKey: key })).body.data).toMatchObject({ phase: 'FEATURE_SELECTION', ontologyCoverage: 1 });

    // And compiles what it has so far into the project's specification, then reads it.
    const queued = await data(client, 'compile_specification', { projectId: project.id, includeTestPlan: true });
    expect(queued).toMatchObject({ status: 'compiling' });
    let specification = await data(client, 'get_specification', { specId: queued.specId });
    for (const deadline = Date.now() + 30_000; specification.status === 'compiling' && Date.now() < deadline; ) {
      await sleep(100);
      specification = await data(client, 'get_specification', { specId: queued.specId });
    }
    expect(specification).toMatchObject({ status: 'completed', spec: { metadata: { compiledFromPhase: 'FEATURE_SELECTION' } } });
    expect(specification.spec.entities.map((entity: { name: string }) => entity.name)).toEqual(['clinic', 'booking']);
    // Agents draft it too, under a budget: one too small stops them with a checkpoint, and a resume with more finishes.
    const designer = await data(client, 'generate_spec_with_agents', { projectId: project.id, agents: ['designer'], strategy: 'sequential' });
    const followed = async (executionId: string) => {
      let execution = await data(client, 'get_agent_execution', { executionId });
      for (const deadline = Date.now() + 30_000; execution.status === 'running' && Date.now() < deadline; ) {
        await sleep(100);
        execution = await data(client, 'get_agent_execution', { executionId });
      }
      return execution;
    };
    const [designerCall] = (await followed(designer.executionId)).calls;
    const starved = await data(client, 'generate_spec_with_agents', { projectId: project.id, agents: ['designer'], budget: { maxTokens: designerCall.inputTokens + 1 } });
    const stopped = await followed(starved.executionId);
    expect(stopped).toMatchObject({ status: 'failed', error: { code: 'budget_exceeded' } });
    await data(client, 'resume_agent_execution', { executionId: starved.executionId, checkpoint: stopped.error.checkpoint, budget: { maxTokens: 100_000 } });
    const finished = await followed(starved.executionId);
    expect(finished).toMatchObject({ status: 'completed', result: { validationPassed: false, spec: { metadata: { draftedBy: { designSystem: 'designer' } } } } });

    // The work the project asks of people: a task answered with one of its actions, safely retried.
    const task = await call(app.url, '/api/tasks', { apiKey: key, body: { projectId: project.id, type: 'DECIDE', title: 'Pick the database', description: 'For the clinic data', assigneeType: 'user', assigneeId: (await data(client, 'whoami')).userId, actions: [{ type: 'SINGLE_SELECT', label: 'Database', config: { options: [{ value: 'postgres', label: 'PostgreSQL' }] } }] } });
    expect(task.status, task.text).toBe(201);
    // Beside the tasks discovery's answers made (an integration to connect, a regulation to review).
    expect((await data(client, 'list_tasks', { projectId: project.id, status: 'pending' })).tasks.map((t: { title: string }) => t.title)).toEqual(['Connect Google Calendar', 'Review GDPR obligations', 'Pick the database']);
    expect((await data(client, 'my_tasks')).counts).toMatchObject({ pending: 1 });
    const submitted = await data(client, 'submit_task_action', { taskId: task.body.data.id, actionId: 'a1', data: { value: 'postgres' }, idempotencyKey: 'db-choice' });
    expect(submitted.effects).toEqual({ taskCompleted: true, outputBindings: [{ field: 'a1', value: 'postgres' }], workflowsTriggered: [] });
    expect(await data(client, 'submit_task_action', { taskId: task.body.data.id, actionId: 'a1', data: { value: 'postgres' }, idempotencyKey: 'db-choice' })).toEqual(submitted);

    // Which a kit then turns into files.
    const run = await data(client, 'execute_kit', { orgId, kitId: 'openapi-api', projectId: project.id, businessProfile: { company: { name: 'Clinic Co', industry: 'health' } }, specificationId: queued.specId, dryRun: true });
    let execution = await data(client, 'get_execution', { orgId, executionId: run.executionId });
    for (const deadline = Date.now() + 30_000; ['pending', 'running'].includes(execution.status) && Date.now() < deadline; ) {
      await sleep(100);
      execution = await data(client, 'get_execution', { orgId, executionId: run.executionId });
    }
    expect(execution, execution.errorMessage).toMatchObject({ status: 'completed' });
    expect(stderr()).toBe('');
  });

  it("reads a file near the service's 1 MiB limit whatever its characters, and an empty one, keeping the connection", async () => {
    // Control characters are six bytes each in JSON: with the content also in structured content, the
    // answer was 12 MB, over the 10 MiB an MCP client reads in a message, and the connection closed.
    const kit = {
      manifest: {
        metadata: { id: 'raw-bytes', displayName: 'Raw bytes', version: '1.0.0', description: 'A file of control characters', author: 'test', kitType: 'file' },
        platform: { name: 'none', category: 'test' },
        phases: ['PLAN'],
        outputs: [
          { id: 'raw', filename: 'raw.txt', template: 't/raw.hbs', outputType: 'text' },
          { id: 'empty', filename: 'empty.txt', template: 't/empty.hbs', outputType: 'text' },
        ],
        discovery: { pools: [] },
        hooks: { PLAN: 'h/plan.js' },
      },
      files: {
        't/raw.hbs': '{{{@plan.raw}}}',
        't/empty.hbs': '',
        'h/plan.js': "function plan() { var raw = '\\u0001'; while (raw.length < 1000000) raw += raw; return { data: { raw: raw.slice(0, 1000000) } }; }",
      },
    };
    expect((await call(app.url, `/api/${orgId}/kits`, { apiKey: key, body: kit })).status).toBe(201);
    const { client } = await connect({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: key });
    const project = await data(client, 'create_project', { name: 'Raw bytes' });
    const started = await data(client, 'execute_kit', { orgId, kitId: 'raw-bytes', projectId: project.id, businessProfile: { company: { name: 'A', industry: 'B' } }, dryRun: true });
    let execution = await data(client, 'get_execution', { orgId, executionId: started.executionId });
    for (const deadline = Date.now() + 30_000; ['pending', 'running'].includes(execution.status) && Date.now() < deadline; ) {
      await sleep(100);
      execution = await data(client, 'get_execution', { orgId, executionId: started.executionId });
    }
    expect(execution.outputs.map((output: { outputId: string; contentSizeBytes: number }) => [output.outputId, output.contentSizeBytes])).toEqual([['empty', 0], ['raw', 1_000_000]]);

    const raw = await callTool(client, 'get_output', { orgId, executionId: started.executionId, outputId: 'raw' });
    expect(raw.isError, textOf(raw)).toBeFalsy();
    expect(JSON.parse((raw.content[0] as { text: string }).text)).toMatchObject({ filename: 'raw.txt', contentSizeBytes: 1_000_000 });
    expect((raw.content[1] as { text: string }).text).toBe('\u0001'.repeat(1_000_000));

    const empty = await callTool(client, 'get_output', { orgId, executionId: started.executionId, outputId: 'empty' });
    expect(empty.content.map((part) => (part.type === 'text' ? part.text : ''))).toEqual([expect.stringContaining('"filename": "empty.txt"'), '']);
    // Still connected.
    expect(await data(client, 'whoami')).toMatchObject({ userId: app.bootstrap.userId });
  }, 60_000);

  it("answers the service's refusals as tool errors the assistant can act on, changing nothing", async () => {
    const { client } = await connect({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: key });
    const missing = await callTool(client, 'get_project', { projectId: '00000000-0000-4000-8000-000000000000' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^NOT_FOUND: .+\nRequest id: \S+$/);

    const before = (await call(app.url, '/api/projects?limit=200', { apiKey: key })).body.data.total;
    const invalid = await callTool(client, 'create_project', { name: '' });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/^VALIDATION_ERROR: .+\n- name: .+/);
    const unknownKit = await callTool(client, 'execute_kit', { orgId, kitId: 'no-such-kit', projectId: '00000000-0000-4000-8000-000000000000', businessProfile: { company: { name: 'A', industry: 'B' } } });
    expect(unknownKit.isError).toBe(true);
    expect(textOf(unknownKit)).toMatch(/^NOT_FOUND: /);
    expect((await call(app.url, '/api/projects?limit=200', { apiKey: key })).body.data.total).toBe(before);
  });

  it('with a key the service refuses, says UNAUTHORIZED on every call and never shows the key', async () => {
    const wrongKey = `${key.slice(0, -6)}AAAAAA`;
    const server = await connect({ SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: wrongKey });
    const refused = await callTool(server.client, 'whoami');
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^UNAUTHORIZED: /);
    expect(JSON.stringify(refused) + server.stderr()).not.toContain(wrongKey);
  });

  it('with the service unreachable, says so on each call', async () => {
    const { client } = await connect({ SPECWRIGHT_URL: 'http://127.0.0.1:9', SPECWRIGHT_API_KEY: key });
    const unreachable = await callTool(client, 'list_projects');
    expect(unreachable.isError).toBe(true);
    expect(textOf(unreachable)).toMatch(/^The Specwright service did not answer this call: /);
    expect(textOf(unreachable)).not.toContain(key);
  });

  it('ends when the assistant closes its stdin', async () => {
    const ended = await runCommand(['tool-server'], { SPECWRIGHT_URL: app.url, SPECWRIGHT_API_KEY: key });
    expect(ended).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('refuses to start without its environment, or with an argument (exit 2), never echoing a key', async () => {
    const bare = await runCommand(['tool-server'], {});
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^specwright tool-server: set SPECWRIGHT_URL and SPECWRIGHT_API_KEY in the environment/);

    const noKey = await runCommand(['tool-server'], { SPECWRIGHT_URL: app.url });
    expect([noKey.code, noKey.stderr]).toEqual([2, expect.stringMatching(/^specwright tool-server: set SPECWRIGHT_API_KEY in/)]);

    const keyAsArgument = await runCommand(['tool-server', key], { SPECWRIGHT_URL: app.url });
    expect(keyAsArgument.code).toBe(2);
    expect(keyAsArgument.stderr).toMatch(/takes no arguments \(got an argument that looks like an API key, not shown\)/);
    expect(keyAsArgument.stderr).not.toContain(key);

    const badUrl = await runCommand(['tool-server'], { SPECWRIGHT_URL: 'ftp://example.test', SPECWRIGHT_API_KEY: key });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/^specwright tool-server: /);
    expect(badUrl.stderr).not.toContain(key);
  });
});

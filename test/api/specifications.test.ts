import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLINIC_ANSWERS_BY_PHASE, flowWalker } from '../helpers/flow-walk.ts';
import { waitForExecution } from '../helpers/kit-fixtures.ts';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** A project's flow compiled into its specification by the worker (seed §4.7). */
let app: TestApp;
let apiKey: string;
let orgId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key, body });
const get = (path: string, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key });

let walk: ReturnType<typeof flowWalker>;
const newProject = (name: string) => walk.newProject(name, 'Online booking for small clinics');
const answerPhase = (projectId: string, answers: Record<string, unknown>) => walk.answerPhase(projectId, answers);

const answersByPhase = CLINIC_ANSWERS_BY_PHASE;
const finishedProject = (name: string) => walk.finishedProject(name);

async function compiled(specId: string, key = apiKey) {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(100)) {
    const response = await get(`/specification/${specId}`, key);
    expect(response.status, response.text).toBe(200);
    if (response.body.data.status !== 'compiling') return response.body.data;
  }
  throw new Error('the specification did not compile within 30 s');
}

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_GENERAL_PER_MINUTE: '5000', RATE_LIMIT_COMPILATION_PER_MINUTE: '100' } });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
}, 120_000);
afterAll(() => app?.stop());

describe('compiling a specification', () => {
  it("turns a finished flow into entities, endpoints, workflows, requirements, tests and a design system, and keeps it", async () => {
    const projectId = await finishedProject('Clinic bookings');
    const queued = await post('/specification/compile', { projectId, options: { includeTaskGraph: true, includeRunbook: true } });
    expect(queued.status, queued.text).toBe(202);
    expect(queued.body.data).toEqual({ specId: expect.any(String), status: 'compiling', estimatedTime: 1, statusUrl: `/api/specification/${queued.body.data.specId}` });

    const specification = await compiled(queued.body.data.specId);
    expect(specification).toMatchObject({ projectId, version: '1', status: 'completed', errorMessage: null, validation: { passed: true, errors: [], warnings: [] } });
    expect(specification.compiledAt).not.toBeNull();
    const { spec } = specification;
    expect(spec.metadata).toMatchObject({ title: 'Clinic bookings', version: '1', format: 'v2', compiledFromPhase: 'SPECIFICATION' });
    expect(spec.overview).toMatchObject({ problem: expect.stringContaining('Small clinics'), audience: ['Consumers', 'Business customers'], platforms: ['Web'], integrations: ['Google Calendar'] });
    expect(spec.entities.map((entity: { name: string; path: string }) => [entity.name, entity.path])).toEqual([
      ['clinic', '/clinics'],
      ['patient', '/patients'],
      ['appointment', '/appointments'],
      ['category', '/categories'],
    ]);
    // Multi-tenant: every entity carries its tenant.
    expect(spec.entities[0].fields.map((field: { name: string }) => field.name)).toEqual(['id', 'tenantId', 'createdAt', 'updatedAt']);
    expect(spec.endpoints).toContainEqual({ method: 'DELETE', path: '/patients/{id}', summary: 'Delete patient', source: 'patient' });
    expect(spec.endpoints).toContainEqual({ method: 'POST', path: '/bookings', summary: 'Book a slot', source: 'Calendar and bookings' });
    // The most important feature first, and a must.
    expect(spec.requirements.slice(0, 3).map((requirement: { id: string; title: string; priority: string }) => [requirement.id, requirement.title, requirement.priority])).toEqual([
      ['FR-001', 'Calendar and bookings', 'must'],
      ['FR-002', 'Sign-in and user profiles', 'should'],
      ['FR-003', 'Manage patient', 'should'],
    ]);
    expect(spec.requirements.filter((requirement: { kind: string }) => requirement.kind === 'non-functional').map((requirement: { title: string }) => requirement.title)).toEqual([
      'Complies with GDPR',
      'Accessibility: WCAG 2.2 AA',
      'Serves 1,000 to 100,000 users in its first year',
    ]);
    expect(spec.testCases).toHaveLength(spec.requirements.length);
    expect(spec.workflows[0]).toEqual({ name: 'Calendar and bookings', feature: 'bookings', steps: expect.arrayContaining(['Pick a free slot']) });
    expect(spec.architecture).toMatchObject({ style: 'modular_monolith', multiTenant: true, timeline: 'Within 3 months', teamSize: 3, releaseStrategy: 'A beta first' });
    expect(spec.architecture.patterns).toEqual(['multi-tenant-saas', 'regulated-data']);
    expect(spec.designSystem).toEqual({ visualStyle: 'Minimal', brandColors: '#0a5, white', accessibility: 'WCAG 2.2 AA' });
    expect(spec.taskGraph.tasks.at(-1)).toMatchObject({ title: 'Release', dependsOn: expect.arrayContaining(['T5', 'T6', 'T7']) });
    expect(spec.runbook).toMatchObject({ strategy: 'beta_first', steps: expect.arrayContaining(['Invite beta users']) });

    // A second compile is version 2; the first is kept as it was.
    const again = await post('/specification/compile', { projectId });
    expect((await compiled(again.body.data.specId)).version).toBe('2');
    expect((await compiled(queued.body.data.specId)).spec).toEqual(spec);
    // The request's options outrank the answers: no test plan, though the project said yes.
    const withoutTests = await post('/specification/compile', { projectId, options: { includeTestPlan: false } });
    expect((await compiled(withoutTests.body.data.specId)).spec).toMatchObject({ metadata: { version: '3' }, testCases: [] });
  }, 60_000);

  it("feeds a kit: its entities become the kit's, and the OpenAPI kit writes their paths", async () => {
    const projectId = await finishedProject('Clinic API from its specification');
    const specId = (await post('/specification/compile', { projectId })).body.data.specId;
    const businessProfile = { company: { name: 'Clinic Co', industry: 'healthcare' } };
    const execute = (body: Record<string, unknown>) => post(`/${orgId}/kits/openapi-api/execute`, { projectId, businessProfile, options: { dryRun: true }, ...body });

    // Not compiled yet, or not this project's: refused, and no execution is written.
    const executions = () => countRows(app.database.ownerUrl, 'kit_executions where project_id = $1', [projectId]);
    await compiled(specId);
    const before = await executions();
    const [stillCompiling] = await sqlAsOwner(`insert into specifications (tenant_id, project_id, version, options, input) values ($1, $2, 99, '{}', '{}') returning id`, [app.bootstrap.tenantId, projectId]);
    const early = await execute({ specificationId: stillCompiling.id });
    expect([early.status, early.body.error.code]).toEqual([409, 'CONFLICT']);
    const otherProject = await finishedProject('Another project');
    const otherSpec = (await post('/specification/compile', { projectId: otherProject })).body.data.specId;
    await compiled(otherSpec);
    const foreign = await execute({ specificationId: otherSpec });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'NOT_FOUND']);
    expect(await executions()).toBe(before);

    const started = await execute({ specificationId: specId });
    expect(started.status, started.text).toBe(201);
    const execution = await waitForExecution(app.url, apiKey, orgId, started.body.data.executionId, 30_000);
    expect(execution.status, execution.errorMessage).toBe('completed');
    const document = execution.outputs.find((output: { filename: string }) => output.filename.endsWith('openapi.yaml'));
    const content = (await get(`/${orgId}/kits/executions/${execution.id}/outputs/${document.outputId}`)).body.data.content as string;
    for (const path of ['/clinics', '/patients', '/appointments', '/categories']) expect(content).toContain(`"${path}":`);
    // What the execution was given is kept with it: the specification's entities.
    const [stored] = await sqlAsOwner('select input from kit_executions where id = $1', [execution.id]);
    expect(stored.input.discoveryAnswers.entities.map((entity: { name: string }) => entity.name)).toEqual(['clinic', 'patient', 'appointment', 'category']);
  }, 90_000);

  it('compiles what the flow said when asked, and says what is missing from an unfinished one', async () => {
    const projectId = await newProject('Half done');
    await post('/flow/start', { projectId });
    const queued = await post('/specification/compile', { projectId });
    expect(queued.status, queued.text).toBe(202);
    // Answered after the compile was asked for: not in it.
    await answerPhase(projectId, answersByPhase[0]![1]);
    const specification = await compiled(queued.body.data.specId);
    expect(specification.status).toBe('completed');
    expect(specification.spec.overview).toMatchObject({ description: 'Online booking for small clinics', problem: null, audience: [] });
    expect(specification.validation.passed).toBe(false);
    expect(specification.validation.errors.map((finding: { code: string }) => finding.code)).toEqual(['no_problem', 'no_entities', 'no_features']);
    expect(specification.validation.warnings.map((finding: { code: string }) => finding.code)).toEqual(['flow_unfinished', 'unanswered_questions']);
    expect(specification.spec.designSystem).toEqual({ visualStyle: null, brandColors: null, accessibility: null });
  }, 60_000);

  it('refuses what cannot compile, and writes nothing (no row, no job)', async () => {
    const projectId = await newProject('Not started');
    const count = async () => [await countRows(app.database.ownerUrl, 'specifications'), await countRows(app.database.ownerUrl, "graphile_worker.jobs where task_identifier = 'specifications.compile'")];
    const before = await count();
    const notStarted = await post('/specification/compile', { projectId });
    expect([notStarted.status, notStarted.body.error.code]).toEqual([409, 'CONFLICT']);
    const unknownProject = await post('/specification/compile', { projectId: '00000000-0000-4000-8000-000000000000' });
    expect([unknownProject.status, unknownProject.body.error.code]).toEqual([404, 'NOT_FOUND']);
    const badOption = await post('/specification/compile', { projectId, options: { format: 'v3' } });
    expect([badOption.status, badOption.body.error.details.issues[0].field]).toEqual([400, 'options.format']);
    const extra = await post('/specification/compile', { projectId, options: { includeEverything: true } });
    expect(extra.status).toBe(400);
    expect(await count()).toEqual(before);
    const missing = await get('/specification/00000000-0000-4000-8000-000000000000');
    expect([missing.status, missing.body.error.code]).toEqual([404, 'NOT_FOUND']);
  });

  it("is for members and above; a customer reads the project's specifications but compiles none; another tenant sees nothing", async () => {
    const projectId = await newProject('Who compiles');
    await post('/flow/start', { projectId });
    const queued = await post('/specification/compile', { projectId });
    const customer = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Cass');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [app.bootstrap.tenantId, orgId, customer.userId]);
    expect((await post('/agency-projects', { organizationId: orgId, projectId, customerUserId: customer.userId })).status).toBe(201);
    const refused = await post('/specification/compile', { projectId }, customer.apiKey);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'FORBIDDEN']);
    expect((await compiled(queued.body.data.specId, customer.apiKey)).status).toBe('completed');

    const foreign = await createTenant(app, 'Elsewhere');
    expect((await get(`/specification/${queued.body.data.specId}`, foreign.apiKey)).status).toBe(404);
    expect((await post('/specification/compile', { projectId }, foreign.apiKey)).status).toBe(404);
    expect(await countRows(app.database.ownerUrl, 'specifications where project_id = $1', [projectId])).toBe(1);
  }, 60_000);

  it('goes with its project, counted', async () => {
    const projectId = await newProject('Deleted with its specification');
    await post('/flow/start', { projectId });
    await compiled((await post('/specification/compile', { projectId })).body.data.specId);
    const deleted = await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'DELETE' });
    expect(deleted.body.data.deletedTables).toContain('specifications');
    expect(await countRows(app.database.ownerUrl, 'specifications where project_id = $1', [projectId])).toBe(0);
  }, 60_000);
});

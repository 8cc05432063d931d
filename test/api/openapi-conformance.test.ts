import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedOperations } from '../helpers/documented-operations.ts';
import { call, type ApiResponse, type RequestOptions } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit, waitForBundle } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Every operation of /api/openapi.json, called for real: each answer's status must be one the
 * document lists for that operation, and its body must validate against the schema documented for
 * that status. A REST caller generating a client from the document gets exactly what the wire sends.
 */

let app: TestApp;
let document: any;
let key: string;
let orgId: string;
const problems: string[] = [];
const exercised = new Set<string>();
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_AGENT_PER_MINUTE: '1000', RATE_LIMIT_COMPILATION_PER_MINUTE: '1000' } });
  key = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  document = (await call(app.url, '/api/openapi.json')).body;
}, 120_000);
afterAll(() => app?.stop());

/** Calls `path` (a concrete URL under /api) as the operation `method template` and checks the answer against the document. */
async function conform(method: string, template: string, path: string, options: RequestOptions = {}, target = app): Promise<ApiResponse> {
  const response = await call(target.url, `/api${path}`, { method, apiKey: target.bootstrap.apiKey, ...options });
  const operationName = `${method} ${template}`;
  exercised.add(operationName);
  const operation = document.paths[template]?.[method.toLowerCase()];
  if (!operation) {
    problems.push(`${operationName}: not in the document`);
    return response;
  }
  const documented = operation.responses[String(response.status)];
  if (!documented) {
    problems.push(`${operationName}: answered ${response.status} (${response.body?.error?.code ?? 'success'}), which the document does not list`);
    return response;
  }
  for (const [name, header] of Object.entries((documented.headers ?? {}) as Record<string, { required?: boolean }>)) {
    if (header.required && !response.headers.has(name)) problems.push(`${operationName} ${response.status}: no ${name} header, which the document says every such answer has`);
  }
  // A HEAD answer has no body, and its document promises none: the headers are all there is.
  if (method === 'HEAD') {
    if (response.text !== '') problems.push(`${operationName} ${response.status}: answered a body, which no HEAD answer has`);
    if (documented.content) problems.push(`${operationName} ${response.status}: the document promises a body, which no HEAD answer has`);
    return response;
  }
  const mediaType = response.headers.get('content-type')?.split(';')[0] ?? '';
  if (mediaType !== 'application/json') {
    if (!documented.content?.[mediaType]) problems.push(`${operationName} ${response.status}: answered ${mediaType}, which the document does not list`);
    return response;
  }
  const schemaKey = `${operationName} ${response.status}`;
  let validate = validators.get(schemaKey);
  if (!validate) {
    validate = ajv.compile({ ...documented.content['application/json'].schema, components: document.components });
    validators.set(schemaKey, validate);
  }
  if (!validate(response.body)) {
    problems.push(`${operationName} ${response.status}: body does not match the documented schema: ${ajv.errorsText(validate.errors)}`);
  }
  return response;
}

describe('every documented operation, called for real', () => {
  it('answers only documented statuses with bodies that match the documented schemas', async () => {
    const otherTenant = await createTenant(app, 'Conformance');

    // Identity, health, developer settings.
    await conform('GET', '/health', '/health', { apiKey: undefined });
    await conform('GET', '/me', '/me');
    await conform('GET', '/me', '/me', { apiKey: 'swk_nope_nope' });
    await conform('GET', '/developer/api-keys', '/developer/api-keys');
    const apiKey = (await conform('POST', '/developer/api-keys', '/developer/api-keys', { body: { name: 'conformance' } })).body.data;
    await conform('POST', '/developer/api-keys', '/developer/api-keys', { body: { name: '' } });
    await conform('POST', '/developer/api-keys', '/developer/api-keys', { rawBody: 'name=laptop', headers: { 'content-type': 'text/plain' } });
    await conform('POST', '/developer/api-keys', '/developer/api-keys', { rawBody: '{"name": "laptop"', headers: { 'content-type': 'application/json' } });
    await conform('POST', '/developer/api-keys', '/developer/api-keys', { body: { name: 'x'.repeat(1_100_000) } });
    await conform('DELETE', '/developer/api-keys/{keyId}', `/developer/api-keys/${apiKey.id}`);
    await conform('DELETE', '/developer/api-keys/{keyId}', '/developer/api-keys/00000000-0000-4000-8000-000000000000');
    // A platform admin naming a tenant that does not exist, on operations of every kind.
    const nowhere = { 'x-tenant-id': '00000000-0000-4000-8000-000000000000' };
    await conform('GET', '/me', '/me', { headers: nowhere });
    await conform('GET', '/me', '/me', { headers: { 'x-tenant-id': 'not-a-tenant' } });
    await conform('POST', '/organizations', '/organizations', { headers: nowhere, body: { name: 'Nowhere', slug: `nowhere-${Date.now()}` } });
    // A user holds at most 50 keys that are not revoked: the 51st is a CONFLICT.
    const keyOwner = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Keyholder');
    for (let n = 1; n < 50; n += 1) {
      expect((await call(app.url, '/api/developer/api-keys', { apiKey: keyOwner.apiKey, body: { name: `key ${n}` } })).status).toBe(201);
    }
    expect((await conform('POST', '/developer/api-keys', '/developer/api-keys', { apiKey: keyOwner.apiKey, body: { name: 'one too many' } })).status).toBe(409);

    // Admin.
    await conform('POST', '/admin/tenants', '/admin/tenants', { body: { name: 'Second', ownerEmail: `second-${Date.now()}@example.test` } });
    await conform('PATCH', '/admin/tenants/{tenantId}/features', `/admin/tenants/${otherTenant.tenantId}/features`, { body: { kits_enabled: true } });
    await conform('PATCH', '/admin/tenants/{tenantId}/features', `/admin/tenants/${otherTenant.tenantId}/features`, { body: { kits_enabled: true }, apiKey: otherTenant.apiKey });
    const lostAnswer = await createTenant(app, 'Lost answer');
    expect((await conform('POST', '/admin/tenants/{tenantId}/owner-key', `/admin/tenants/${lostAnswer.tenantId}/owner-key`)).status).toBe(201);
    // otherTenant's owner has used their key (just above): CONFLICT.
    expect((await conform('POST', '/admin/tenants/{tenantId}/owner-key', `/admin/tenants/${otherTenant.tenantId}/owner-key`)).status).toBe(409);
    await conform('POST', '/admin/tenants/{tenantId}/owner-key', '/admin/tenants/00000000-0000-4000-8000-000000000000/owner-key');
    await conform('POST', '/admin/tenants/{tenantId}/owner-key', `/admin/tenants/${lostAnswer.tenantId}/owner-key`, { apiKey: otherTenant.apiKey });

    // Organizations and members.
    const slug = `conf-${Date.now()}`;
    const organization = (await conform('POST', '/organizations', '/organizations', { body: { name: 'Conformance', slug, settings: { theme: 'dark' } } })).body.data;
    await conform('POST', '/organizations', '/organizations', { body: { name: 'Again', slug } });
    await conform('GET', '/organizations', '/organizations?limit=5');
    await conform('GET', '/organizations/slug-check', `/organizations/slug-check?slug=${slug}`);
    await conform('GET', '/organizations/{id}', `/organizations/${organization.id}`);
    await conform('GET', '/organizations/{id}', `/organizations/${otherTenant.organizationId}`);
    await conform('PUT', '/organizations/{id}', `/organizations/${organization.id}`, { body: { displayName: 'Conformance Inc.' } });
    const colleague = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Colleague');
    await conform('POST', '/organizations/{id}/members', `/organizations/${organization.id}/members`, { body: { userId: colleague.userId, role: 'member' } });
    await conform('POST', '/organizations/{id}/members', `/organizations/${organization.id}/members`, { body: { userId: colleague.userId, role: 'member' } });
    await conform('POST', '/organizations/{id}/members', `/organizations/${otherTenant.organizationId}/members`, { body: { userId: colleague.userId, role: 'member' } });
    await conform('GET', '/organizations/{id}/members', `/organizations/${organization.id}/members`);
    await conform('PUT', '/organizations/{id}/members/{userId}', `/organizations/${organization.id}/members/${colleague.userId}`, { body: { role: 'admin' } });
    await conform('DELETE', '/organizations/{id}/members/{userId}', `/organizations/${organization.id}/members/${colleague.userId}`);

    // Projects.
    const project = (await conform('POST', '/projects', '/projects', { body: { name: 'Conformance', description: 'checks the document', organizationId: orgId } })).body.data;
    await conform('POST', '/projects', '/projects', { body: { name: 'Nowhere', organizationId: otherTenant.organizationId } });
    await conform('GET', '/projects', '/projects?limit=10&offset=0&status=active');
    await conform('GET', '/projects/{projectId}', `/projects/${project.id}`);
    await conform('GET', '/projects/{projectId}', '/projects/not-a-uuid');
    await conform('PATCH', '/projects/{projectId}', `/projects/${project.id}`, { body: { name: 'Conformance 2', status: 'archived' } });
    const doomed = (await conform('POST', '/projects', '/projects', { body: { name: 'Doomed' } })).body.data;
    await conform('DELETE', '/projects/{projectId}', `/projects/${doomed.id}`);

    // The flow: not started, started, answered, refused, forced on.
    const flowProject = (await conform('POST', '/projects', '/projects', { body: { name: 'Flow', description: 'asks questions', organizationId: orgId } })).body.data;
    const flowBody = (extra: Record<string, unknown> = {}) => ({ body: { projectId: flowProject.id, ...extra } });
    expect((await conform('GET', '/flow/readiness/{projectId}', `/flow/readiness/${flowProject.id}`)).body.data.currentPhase).toBe('CREATED');
    expect((await conform('POST', '/flow/get-next-question', '/flow/get-next-question', flowBody())).status).toBe(409);
    const firstQuestion = (await conform('POST', '/flow/start', '/flow/start', flowBody())).body.data.firstQuestion;
    expect((await conform('POST', '/flow/start', '/flow/start', flowBody())).status).toBe(409);
    await conform('POST', '/flow/start', '/flow/start', { body: { projectId: '00000000-0000-4000-8000-000000000000' } });
    await conform('POST', '/flow/get-next-question', '/flow/get-next-question', flowBody({ sessionId: 'a-session' }));
    expect((await conform('POST', '/flow/answer-question', '/flow/answer-question', flowBody({ questionId: firstQuestion.id, answer: { value: 'Clinics lose bookings after hours', confidence: 0.4 } }))).status).toBe(200);
    expect((await conform('POST', '/flow/answer-question', '/flow/answer-question', flowBody({ questionId: firstQuestion.id, answer: { value: 42 } }))).status).toBe(400);
    expect((await conform('POST', '/flow/answer-question', '/flow/answer-question', flowBody({ questionId: '00000000-0000-4000-8000-000000000000', answer: { value: 'x' } }))).status).toBe(404);
    expect((await conform('GET', '/flow/readiness/{projectId}', `/flow/readiness/${flowProject.id}`)).body.data.blockers.length).toBeGreaterThan(0);
    await conform('GET', '/flow/readiness/{projectId}', '/flow/readiness/00000000-0000-4000-8000-000000000000');
    await conform('GET', '/flow/questions/{projectId}', `/flow/questions/${flowProject.id}?phase=DISCOVERY`);
    await conform('GET', '/flow/questions/{projectId}', '/flow/questions/00000000-0000-4000-8000-000000000000');
    await conform('GET', '/flow/questions/{projectId}', `/flow/questions/${flowProject.id}?phase=NEVER`);
    expect((await conform('POST', '/flow/transition', '/flow/transition', flowBody({ targetPhase: 'FEATURE_SELECTION' }))).body.error.code).toBe('READINESS_FAILED');
    expect((await conform('POST', '/flow/transition', '/flow/transition', flowBody({ targetPhase: 'PLANNING' }))).body.error.code).toBe('PHASE_INVALID');
    expect((await conform('POST', '/flow/transition', '/flow/transition', flowBody({ targetPhase: 'FEATURE_SELECTION', force: true }))).status).toBe(200);
    // Its specification: compiled by the worker, read while compiling and once done; refusals.
    const compiling = (await conform('POST', '/specification/compile', '/specification/compile', flowBody({ options: { format: 'v2', includeTestPlan: true, includeTaskGraph: true, includeRunbook: true } }))).body.data;
    await conform('GET', '/specification/{specId}', `/specification/${compiling.specId}`);
    for (let status = 'compiling', deadline = Date.now() + 30_000; status === 'compiling' && Date.now() < deadline; await new Promise((done) => setTimeout(done, 100))) {
      status = (await conform('GET', '/specification/{specId}', `/specification/${compiling.specId}`)).body.data.status;
    }
    await conform('GET', '/specification/{specId}', '/specification/00000000-0000-4000-8000-000000000000');
    await conform('POST', '/specification/compile', '/specification/compile', { body: { projectId: '00000000-0000-4000-8000-000000000000' } });
    await conform('POST', '/specification/compile', '/specification/compile', flowBody({ options: { format: 'v9' } }));
    // Agents drafting it: run, read while running and once settled, failed on a budget and resumed; refusals; memory.
    const drafting = (await conform('POST', '/agents/generate-spec', '/agents/generate-spec', flowBody({ options: { strategy: 'hierarchical', agents: ['architect'] } }))).body.data;
    const settledExecution = async (executionId: string) => {
      for (let status = 'running', deadline = Date.now() + 30_000; status === 'running' && Date.now() < deadline; await new Promise((done) => setTimeout(done, 100))) {
        status = (await conform('GET', '/agents/execution/{executionId}/status', `/agents/execution/${executionId}/status`)).body.data.status;
      }
      return (await conform('GET', '/agents/execution/{executionId}/status', `/agents/execution/${executionId}/status`)).body.data;
    };
    expect((await settledExecution(drafting.executionId)).status).toBe('completed');
    // The designer's one call, then the same with room for its prompt and one token of answer.
    const designed = (await conform('POST', '/agents/generate-spec', '/agents/generate-spec', flowBody({ options: { agents: ['designer'] } }))).body.data;
    const [designerCall] = (await settledExecution(designed.executionId)).calls;
    const starved = (await conform('POST', '/agents/generate-spec', '/agents/generate-spec', flowBody({ options: { agents: ['designer'], budget: { maxTokens: designerCall.inputTokens + 1 } } }))).body.data;
    const failedExecution = await settledExecution(starved.executionId);
    expect(failedExecution.error.code).toBe('budget_exceeded');
    expect((await conform('POST', '/agents/execution/{executionId}/resume', `/agents/execution/${starved.executionId}/resume`, { body: { checkpoint: failedExecution.error.checkpoint, budget: { maxTokens: 10 } } })).status).toBe(402);
    expect((await conform('POST', '/agents/execution/{executionId}/resume', `/agents/execution/${starved.executionId}/resume`, { body: { checkpoint: failedExecution.error.checkpoint, budget: { maxTokens: 100_000 } } })).status).toBe(202);
    expect((await conform('POST', '/agents/execution/{executionId}/resume', `/agents/execution/${starved.executionId}/resume`, { body: { checkpoint: failedExecution.error.checkpoint } })).status).toBe(409);
    await conform('POST', '/agents/execution/{executionId}/resume', '/agents/execution/00000000-0000-4000-8000-000000000000/resume', { body: { checkpoint: failedExecution.error.checkpoint } });
    expect((await conform('POST', '/agents/generate-spec', '/agents/generate-spec', flowBody({ options: { budget: { maxTokens: 5 } } }))).status).toBe(402);
    await conform('POST', '/agents/generate-spec', '/agents/generate-spec', flowBody({ options: { agents: ['poet'] } }));
    await conform('POST', '/agents/generate-spec', '/agents/generate-spec', { body: { projectId: '00000000-0000-4000-8000-000000000000' } });
    await conform('GET', '/agents/execution/{executionId}/status', '/agents/execution/00000000-0000-4000-8000-000000000000/status');
    await conform('GET', '/agents/memory', `/agents/memory?sessionId=${drafting.executionId}&agentName=supervisor&limit=5`);
    await conform('GET', '/agents/memory', '/agents/memory?agentName=poet');
    // Tasks: created, listed, blocked, answered once and again under the same key, refused.
    const choice = { type: 'SINGLE_SELECT', label: 'Pick', config: { options: [{ value: 'a', label: 'A' }] } };
    const firstTask = (await conform('POST', '/tasks', '/tasks', flowBody({ type: 'DECIDE', title: 'First', description: 'd', actions: [choice], assigneeType: 'agent', assigneeId: 'architect' }))).body.data;
    const laterTask = (await conform('POST', '/tasks', '/tasks', flowBody({ type: 'REVIEW', title: 'Later', description: 'd', actions: [{ type: 'APPROVE_REJECT', label: 'OK?', config: {} }], dependencies: [firstTask.id], dueDate: '2027-01-01T00:00:00Z' }))).body.data;
    await conform('POST', '/tasks', '/tasks', flowBody({ type: 'DECIDE', title: 'x', description: 'd', actions: [] }));
    await conform('POST', '/tasks', '/tasks', { body: { projectId: '00000000-0000-4000-8000-000000000000', type: 'DECIDE', title: 'x', description: 'd', actions: [choice] } });
    await conform('GET', '/tasks', `/tasks?projectId=${flowProject.id}&status=blocked&limit=5`);
    await conform('GET', '/tasks', '/tasks?projectId=00000000-0000-4000-8000-000000000000');
    expect((await conform('POST', '/tasks/{taskId}/actions/{actionId}', `/tasks/${laterTask.id}/actions/a1`, { body: { data: { decision: 'approve' } } })).status).toBe(409);
    expect((await conform('POST', '/tasks/{taskId}/actions/{actionId}', `/tasks/${firstTask.id}/actions/a1`, { body: { data: { value: 'z' } } })).status).toBe(400);
    expect((await conform('POST', '/tasks/{taskId}/actions/{actionId}', `/tasks/${firstTask.id}/actions/a1`, { body: { data: { value: 'a' }, idempotencyKey: 'conformance' } })).status).toBe(200);
    expect((await conform('POST', '/tasks/{taskId}/actions/{actionId}', `/tasks/${firstTask.id}/actions/a1`, { body: { data: { value: 'a' }, idempotencyKey: 'conformance' } })).status).toBe(200);
    expect((await conform('POST', '/tasks/{taskId}/actions/{actionId}', `/tasks/${firstTask.id}/actions/a1`, { body: { data: { value: 'b' }, idempotencyKey: 'conformance' } })).status).toBe(422);
    await conform('POST', '/tasks/{taskId}/actions/{actionId}', `/tasks/${firstTask.id}/actions/a7`, { body: { data: {} } });
    await conform('GET', '/user-tasks', '/user-tasks?limit=5');
    // Export packs of the compiled specification: a link, and what cannot be exported.
    expect((await conform('POST', '/exports/download', '/exports/download', flowBody({ specId: compiling.specId, format: 'markdown', include: { dod: true, testPlan: true, taskGraph: true, runbook: true } }))).status).toBe(200);
    expect((await conform('POST', '/exports/download', '/exports/download', flowBody({ format: 'json', specId: '00000000-0000-4000-8000-000000000000' }))).status).toBe(404);
    expect((await conform('POST', '/exports/download', '/exports/download', { body: { projectId: project.id, format: 'json' } })).status).toBe(409);
    expect((await conform('POST', '/exports/download', '/exports/download', flowBody({ format: 'pdf' }))).status).toBe(400);

    // Customer invitations and sign-in.
    const email = `invitee-${Date.now()}@example.test`;
    const invitation = (await conform('POST', '/customer-invitations', '/customer-invitations', { body: { organizationId: orgId, email, message: 'Welcome' } })).body.data;
    await conform('POST', '/customer-invitations', '/customer-invitations', { body: { organizationId: orgId, email } });
    await conform('POST', '/customer-invitations', '/customer-invitations', { body: { organizationId: otherTenant.organizationId, email } });
    await conform('GET', '/customer-invitations', `/customer-invitations?organizationId=${orgId}&status=pending`);
    await conform('GET', '/customer-invitations/{token}', `/customer-invitations/${invitation.token}`, { apiKey: undefined });
    await conform('GET', '/customer-invitations/{token}', '/customer-invitations/no-such-token', { apiKey: undefined });
    const password = 'correct horse battery staple';
    const accepted = (await conform('POST', '/customer-invitations/{token}/accept', `/customer-invitations/${invitation.token}/accept`, { apiKey: undefined, body: { name: 'Ivy Invitee', password } })).body.data;
    await conform('POST', '/customer-invitations/{token}/accept', `/customer-invitations/${invitation.token}/accept`, { apiKey: undefined, body: { name: 'Ivy Again', password } });
    await conform('POST', '/customer-invitations/{token}/accept', '/customer-invitations/no-such-token/accept', { apiKey: undefined, body: { name: 'Nobody', password } });
    const forExisting = (await conform('POST', '/customer-invitations', '/customer-invitations', { body: { organizationId: orgId, email: `existing-${Date.now()}@example.test` } })).body.data;
    await conform('POST', '/customer-invitations/{token}/accept', `/customer-invitations/${forExisting.token}/accept`, { apiKey: undefined, body: { userId: colleague.userId } });
    await conform('POST', '/customer-invitations/{token}/accept', `/customer-invitations/${forExisting.token}/accept`, { body: { userId: colleague.userId } });
    const toRevoke = (await conform('POST', '/customer-invitations', '/customer-invitations', { body: { organizationId: orgId, email: `revoked-${Date.now()}@example.test` } })).body.data;
    await conform('POST', '/customer-invitations/{token}/revoke', `/customer-invitations/${toRevoke.token}/revoke`, { body: {} });
    await conform('POST', '/customer-invitations/{token}/revoke', '/customer-invitations/no-such-token/revoke', { body: {} });
    await conform('POST', '/auth/login', '/auth/login', { apiKey: undefined, body: { email, password } });
    await conform('POST', '/auth/login', '/auth/login', { apiKey: undefined, body: { email, password: 'wrong password, surely' } });

    // Agency projects.
    const assignment = (await conform('POST', '/agency-projects', '/agency-projects', { body: { organizationId: orgId, projectId: project.id, customerUserId: accepted.userId } })).body.data;
    await conform('POST', '/agency-projects', '/agency-projects', { body: { organizationId: orgId, projectId: project.id, customerUserId: accepted.userId } });
    await conform('POST', '/agency-projects', '/agency-projects', { body: { organizationId: orgId, projectId: doomed.id, customerUserId: accepted.userId } });
    await conform('GET', '/agency-projects', `/agency-projects?organizationId=${orgId}`);
    await conform('DELETE', '/agency-projects/{id}', `/agency-projects/${assignment.id}`);

    // Kits, executions, credentials.
    const conformanceKit = sampleKit({ id: 'conformance-kit', credentials: [{ id: 'api-key', description: 'An API key', required: false }] });
    await conform('POST', '/{orgId}/kits', `/${orgId}/kits`, { body: conformanceKit });
    await conform('POST', '/{orgId}/kits', `/${orgId}/kits`, { body: conformanceKit });
    await conform('GET', '/{orgId}/kits', `/${orgId}/kits?limit=100`);
    await conform('GET', '/{orgId}/kits/{kitId}', `/${orgId}/kits/conformance-kit`);
    await conform('GET', '/{orgId}/kits/{kitId}', `/${orgId}/kits/no-such-kit`);
    await conform('PATCH', '/{orgId}/kits/{kitId}', `/${orgId}/kits/conformance-kit`, { body: { status: 'active' } });
    const started = (await conform('POST', '/{orgId}/kits/{kitId}/execute', `/${orgId}/kits/conformance-kit/execute`, { body: sampleExecutionBody(project.id) })).body.data;
    await conform('POST', '/{orgId}/kits/{kitId}/execute', `/${orgId}/kits/no-such-kit/execute`, { body: sampleExecutionBody(project.id) });
    await conform('GET', '/{orgId}/kits/executions/{executionId}/bundle', `/${orgId}/kits/executions/${started.executionId}/bundle`);
    await waitForBundle(app.url, key, orgId, started.executionId);
    const bundle = (await conform('GET', '/{orgId}/kits/executions/{executionId}/bundle', `/${orgId}/kits/executions/${started.executionId}/bundle`)).body.data;
    const token = new URL(bundle.downloadUrl, app.url).pathname.split('/').pop()!;
    expect((await conform('GET', '/downloads/{token}', `/downloads/${token}`, { apiKey: undefined })).status).toBe(200);
    expect((await conform('GET', '/downloads/{token}', `/downloads/${token.slice(0, -2)}xx`, { apiKey: undefined })).status).toBe(403);
    expect((await conform('HEAD', '/downloads/{token}', `/downloads/${token}`, { apiKey: undefined })).status).toBe(200);
    expect((await conform('HEAD', '/downloads/{token}', `/downloads/${token.slice(0, -2)}xx`, { apiKey: undefined })).status).toBe(403);
    expect((await conform('HEAD', '/downloads/{token}', `/downloads/${token}?notAParameter=1`, { apiKey: undefined })).status).toBe(400);
    await waitForBundle(app.url, key, orgId, started.executionId);
    await conform('GET', '/{orgId}/kits/executions', `/${orgId}/kits/executions?projectId=${project.id}`);
    await conform('GET', '/{orgId}/kits/executions/{executionId}', `/${orgId}/kits/executions/${started.executionId}`);
    await conform('GET', '/{orgId}/kits/executions/{executionId}/outputs/{outputId}', `/${orgId}/kits/executions/${started.executionId}/outputs/readme`);
    await conform('GET', '/{orgId}/kits/executions/{executionId}/bundle', `/${orgId}/kits/executions/${started.executionId}/bundle`);
    await conform('GET', '/{orgId}/kits/credentials/public-key', `/${orgId}/kits/credentials/public-key`);
    const credential = (
      await conform('POST', '/{orgId}/kits/credentials', `/${orgId}/kits/credentials`, {
        body: { projectId: project.id, kitId: 'conformance-kit', credentialType: 'api-key', credentials: { token: 'a-secret-token-value-for-conformance' } },
      })
    ).body.data;
    await conform('GET', '/{orgId}/kits/credentials', `/${orgId}/kits/credentials?projectId=${project.id}`);
    await conform('DELETE', '/{orgId}/kits/credentials/{credentialId}', `/${orgId}/kits/credentials/${credential.credentialId}`);
    await conform('POST', '/admin/credential-keys/rotate', '/admin/credential-keys/rotate', { body: {} });

    const unexercised = documentedOperations(document).map(({ method, template }) => `${method} ${template}`).filter((operation) => !exercised.has(operation));
    expect(unexercised).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('rate limits, which apply to every operation', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '2' } });
  }, 120_000);
  afterAll(() => limited?.stop());

  it('are documented on every operation, with the envelope the 429 really has', async () => {
    problems.length = 0;
    for (let attempt = 0; attempt < 3; attempt += 1) await conform('GET', '/me', '/me', {}, limited);
    await conform('GET', '/health', '/health', { apiKey: undefined }, limited);
    await conform('GET', '/health', '/health', { apiKey: undefined }, limited);
    const last = await conform('GET', '/health', '/health', { apiKey: undefined }, limited);
    expect(last.status).toBe(429);
    expect(problems).toEqual([]);
    const without429 = documentedOperations<{ responses: object }>(document)
      .filter(({ operation }) => !('429' in operation.responses))
      .map(({ method, template }) => `${method} ${template}`);
    expect(without429).toEqual([]);
  });
});

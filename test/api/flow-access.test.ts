import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type ApiResponse } from '../helpers/http.ts';
import { untilLockWaiters, whileTransactionHolds } from '../helpers/lock-holder.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { lockTableUntilReleased } from '../helpers/table-lock-gate.ts';
import { tableSnapshot } from '../helpers/table-snapshot.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { createTenant, createUserInTenant, ownerOfAnotherOrganization, type Actor } from '../helpers/tenant-fixtures.ts';

/**
 * Who may do what with a project's flow, and what concurrent writes leave behind: anyone who sees
 * the project reads and answers; members, admins and owners (and a platform admin acting in the
 * tenant) start and move it; only admins and owners force a move; a project the caller does not
 * see is NOT_FOUND; writes take turns on the project row.
 */
let app: TestApp;
let owner: { apiKey: string; userId: string; tenantId: string; organizationId: string };
let member: Actor;
let admin: Actor;
let customer: Actor;
let unassignedCustomer: Actor;
let nonMember: Actor;
let ownerElsewhere: Actor;
let foreigner: Actor & { tenantId: string; organizationId: string };

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const as = (caller: { apiKey: string }, headers: Record<string, string> = {}) => ({
  start: (projectId: string) => call(app.url, '/api/flow/start', { apiKey: caller.apiKey, headers, body: { projectId } }),
  next: (projectId: string) => call(app.url, '/api/flow/get-next-question', { apiKey: caller.apiKey, headers, body: { projectId } }),
  answer: (projectId: string, questionId: string, value: unknown) =>
    call(app.url, '/api/flow/answer-question', { apiKey: caller.apiKey, headers, body: { projectId, questionId, answer: { value } } }),
  readiness: (projectId: string) => call(app.url, `/api/flow/readiness/${projectId}`, { apiKey: caller.apiKey, headers }),
  transition: (projectId: string, targetPhase: string, force?: boolean) =>
    call(app.url, '/api/flow/transition', { apiKey: caller.apiKey, headers, body: { projectId, targetPhase, ...(force === undefined ? {} : { force }) } }),
});
const outcome = (response: ApiResponse) => `${response.status} ${response.body?.error?.code ?? ''}`.trim();

/** Every tenant table (the flow's two among them), digested: equal before and after means nothing was written. */
const snapshot = () => tableSnapshot(app.database.ownerUrl);

async function newProject(name: string, description?: string): Promise<string> {
  const created = await call(app.url, '/api/projects', { apiKey: owner.apiKey, body: { name, organizationId: owner.organizationId, ...(description ? { description } : {}) } });
  expect(created.status, created.text).toBe(201);
  return created.body.data.id;
}

async function assign(projectId: string, to: Actor): Promise<string> {
  const assigned = await call(app.url, '/api/agency-projects', { apiKey: owner.apiKey, body: { organizationId: owner.organizationId, projectId, customerUserId: to.userId } });
  expect(assigned.status, assigned.text).toBe(201);
  return assigned.body.data.id;
}

async function addMember(user: Actor, role: 'admin' | 'member' | 'customer') {
  if (role === 'customer') {
    // A customer joins by invitation; the membership it leaves behind, as the isolation matrix makes it.
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [owner.tenantId, owner.organizationId, user.userId]);
    return;
  }
  const added = await call(app.url, `/api/organizations/${owner.organizationId}/members`, { apiKey: owner.apiKey, body: { userId: user.userId, role } });
  expect(added.status, added.text).toBe(201);
}

async function newUser(name: string, role?: 'admin' | 'member' | 'customer'): Promise<Actor> {
  const user = await createUserInTenant(app, sqlAsOwner, owner.tenantId, name);
  if (role) await addMember(user, role);
  return user;
}

const discoveryAnswers: Record<string, unknown> = {
  problem: 'Small clinics lose bookings because patients cannot book online after hours.',
  audience: ['consumers'],
  platforms: ['web'],
  capabilities: ['accounts', 'scheduling'],
  entities: 'clinic, patient, appointment',
  multiTenant: false,
  integrations: 'none',
  compliance: ['gdpr'],
  scale: 'small',
};

/** The questions of a phase as stored, by key. */
async function questionsOf(projectId: string, phase = 'DISCOVERY'): Promise<Record<string, string>> {
  const rows = await sqlAsOwner('select id, key from flow_questions where project_id = $1 and phase = $2', [projectId, phase]);
  return Object.fromEntries(rows.map((row: { id: string; key: string }) => [row.key, row.id]));
}

async function answerDiscovery(projectId: string, by: { apiKey: string }) {
  for (const [key, id] of Object.entries(await questionsOf(projectId))) {
    const answered = await as(by).answer(projectId, id, discoveryAnswers[key]);
    expect(answered.status, `${key}: ${answered.text}`).toBe(200);
  }
}

const phaseOf = async (projectId: string) => (await sqlAsOwner('select phase from projects where id = $1', [projectId]))[0]?.phase;

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '5000' } });
  owner = app.bootstrap;
  member = await newUser('Mia', 'member');
  admin = await newUser('Ada', 'admin');
  customer = await newUser('Cal', 'customer');
  unassignedCustomer = await newUser('Una', 'customer');
  nonMember = await newUser('Nadia');
  ownerElsewhere = await ownerOfAnotherOrganization(app, owner.apiKey, 'Olga');
  foreigner = await createTenant(app, 'Foreign');
});
afterAll(() => app?.stop());

describe('who reaches a flow', () => {
  it('answers NOT_FOUND to whoever does not see the project (another tenant, another organization, no organization, a customer not assigned), and changes nothing', async () => {
    const projectId = await newProject('Hidden flow');
    await assign(projectId, customer);
    expect((await as(owner).start(projectId)).status).toBe(200);
    const { problem } = await questionsOf(projectId);
    const before = await snapshot();
    const got: string[] = [];
    for (const [name, caller] of Object.entries({ foreigner, ownerElsewhere, nonMember, unassignedCustomer })) {
      const api = as(caller);
      for (const [route, response] of Object.entries({
        start: await api.start(projectId),
        next: await api.next(projectId),
        answer: await api.answer(projectId, problem!, 'Planted answer'),
        readiness: await api.readiness(projectId),
        transition: await api.transition(projectId, 'FEATURE_SELECTION'),
        force: await api.transition(projectId, 'FEATURE_SELECTION', true),
      })) {
        got.push(`${name} ${route} ${outcome(response)}`);
        // The answer names nothing of the project, whoever asks.
        expect(response.text).not.toContain('DISCOVERY');
        expect(response.text).not.toContain('Hidden flow');
      }
    }
    expect(got.filter((line) => !line.endsWith('404 NOT_FOUND'))).toEqual([]);
    expect(await snapshot()).toEqual(before);
  });

  it('answers the same over /trpc: NOT_FOUND to whoever does not see the project, FORBIDDEN to a customer moving it', async () => {
    const projectId = await newProject('Flow over tRPC');
    await assign(projectId, customer);
    expect((await as(owner).start(projectId)).status).toBe(200);
    const { problem } = await questionsOf(projectId);
    const before = await snapshot();
    const trpc = (caller: { apiKey: string }) => ({
      'flow.start': call(app.url, '/trpc/flow.start', { apiKey: caller.apiKey, body: { projectId } }),
      'flow.nextQuestion': call(app.url, '/trpc/flow.nextQuestion', { apiKey: caller.apiKey, body: { projectId } }),
      'flow.answerQuestion': call(app.url, '/trpc/flow.answerQuestion', { apiKey: caller.apiKey, body: { projectId, questionId: problem, answer: { value: 'Planted over tRPC' } } }),
      'flow.readiness': call(app.url, `/trpc/flow.readiness?input=${encodeURIComponent(JSON.stringify({ projectId }))}`, { apiKey: caller.apiKey }),
      'flow.transition': call(app.url, '/trpc/flow.transition', { apiKey: caller.apiKey, body: { projectId, targetPhase: 'FEATURE_SELECTION', force: true } }),
    });
    const got: Record<string, string> = {};
    for (const [name, caller] of Object.entries({ foreigner, nonMember, ownerElsewhere, unassignedCustomer, customer })) {
      for (const [procedure, pending] of Object.entries(trpc(caller))) {
        const response = await pending;
        got[`${name} ${procedure}`] = `${response.status} ${response.body?.error?.data?.code ?? ''}`.trim();
      }
    }
    const hidden = { 'flow.start': '404 NOT_FOUND', 'flow.nextQuestion': '404 NOT_FOUND', 'flow.answerQuestion': '404 NOT_FOUND', 'flow.readiness': '404 NOT_FOUND', 'flow.transition': '404 NOT_FOUND' };
    const expected: Record<string, string> = {};
    for (const name of ['foreigner', 'nonMember', 'ownerElsewhere', 'unassignedCustomer']) for (const [procedure, answer] of Object.entries(hidden)) expected[`${name} ${procedure}`] = answer;
    expect(got).toEqual({
      ...expected,
      'customer flow.start': '403 FORBIDDEN',
      'customer flow.nextQuestion': '200',
      'customer flow.answerQuestion': '200',
      'customer flow.readiness': '200',
      'customer flow.transition': '403 FORBIDDEN',
    });
    // The only write that went through is the assigned customer's answer.
    const after = await snapshot();
    expect(Object.keys(after).filter((table) => after[table] !== before[table]).sort()).toEqual(['flow_answers', 'projects']);
    expect(await sqlAsOwner('select value, answered_by from flow_answers where project_id = $1', [projectId])).toEqual([{ value: 'Planted over tRPC', answered_by: customer.userId }]);
  });

  it('lets an assigned customer read and answer, but not start, move or force the flow (FORBIDDEN, nothing written)', async () => {
    const projectId = await newProject('Customer flow');
    await assign(projectId, customer);
    const cal = as(customer);
    const refusedStart = await cal.start(projectId);
    expect(outcome(refusedStart)).toBe('403 FORBIDDEN');
    expect(await phaseOf(projectId)).toBe('CREATED');
    expect(await countRows(app.database.ownerUrl, 'flow_questions where project_id = $1', [projectId])).toBe(0);

    expect((await as(owner).start(projectId)).status).toBe(200);
    expect((await cal.readiness(projectId)).body.data).toMatchObject({ currentPhase: 'DISCOVERY', isReady: false });
    const next = await cal.next(projectId);
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.question.key).toBe('problem');
    await answerDiscovery(projectId, customer);
    const answeredBy = await sqlAsOwner('select distinct answered_by from flow_answers where project_id = $1', [projectId]);
    expect(answeredBy).toEqual([{ answered_by: customer.userId }]);
    expect((await cal.readiness(projectId)).body.data.isReady).toBe(true);

    const before = await snapshot();
    for (const force of [undefined, false, true]) {
      const moved = await cal.transition(projectId, 'FEATURE_SELECTION', force);
      expect(outcome(moved), `force ${force}`).toBe('403 FORBIDDEN');
    }
    expect(await snapshot()).toEqual(before);
    expect(await phaseOf(projectId)).toBe('DISCOVERY');
  });

  it("does not let an assigned customer move the flow of a project that lost its organization (FORBIDDEN, nothing written)", async () => {
    // Only an organization's deletion (which takes its assignments along) leaves a project with none; the
    // check must not read "no organization" as "no one to ask".
    const projectId = await newProject('Orphaned flow');
    await assign(projectId, customer);
    await sqlAsOwner('update projects set organization_id = null where id = $1', [projectId]);
    const before = await snapshot();
    expect(outcome(await as(customer).start(projectId))).toBe('403 FORBIDDEN');
    expect(await snapshot()).toEqual(before);
    expect(await phaseOf(projectId)).toBe('CREATED');
  });

  it('lets a member start and move a ready flow, but forcing is for admins and owners, even when the phase is ready', async () => {
    const projectId = await newProject('Member flow');
    const mia = as(member);
    expect((await mia.start(projectId)).status).toBe(200);
    const before = await snapshot();
    expect(outcome(await mia.transition(projectId, 'FEATURE_SELECTION', true))).toBe('403 FORBIDDEN');
    expect(await snapshot()).toEqual(before);

    await answerDiscovery(projectId, member);
    const beforeReady = await snapshot();
    const forcedWhenReady = await mia.transition(projectId, 'FEATURE_SELECTION', true);
    expect(outcome(forcedWhenReady)).toBe('403 FORBIDDEN');
    expect(forcedWhenReady.body.error.message).toContain('admins and owners');
    expect(await snapshot()).toEqual(beforeReady);

    const moved = await mia.transition(projectId, 'FEATURE_SELECTION');
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.data).toMatchObject({ previousPhase: 'DISCOVERY', currentPhase: 'FEATURE_SELECTION' });

    const forcedByAdmin = await as(admin).transition(projectId, 'PLAN_GENERATION', true);
    expect(forcedByAdmin.status, forcedByAdmin.text).toBe(200);
    expect(await phaseOf(projectId)).toBe('PLAN_GENERATION');
  });

  it('lets a platform admin acting in the tenant start, answer and force the flow of a project of that tenant', async () => {
    const created = await call(app.url, '/api/projects', { apiKey: foreigner.apiKey, body: { name: 'Foreign flow', organizationId: foreigner.organizationId } });
    expect(created.status, created.text).toBe(201);
    const projectId = created.body.data.id;
    const platformAdmin = as(owner, { 'x-tenant-id': foreigner.tenantId });

    const started = await platformAdmin.start(projectId);
    expect(started.status, started.text).toBe(200);
    const answered = await platformAdmin.answer(projectId, started.body.data.firstQuestion.id, 'Answered by the platform admin on behalf of the tenant');
    expect(answered.status, answered.text).toBe(200);
    // The platform admin is no user of that tenant: the answer names no one as its author.
    const rows = await sqlAsOwner('select tenant_id, value, answered_by from flow_answers where project_id = $1', [projectId]);
    expect(rows).toEqual([{ tenant_id: foreigner.tenantId, value: 'Answered by the platform admin on behalf of the tenant', answered_by: null }]);
    // The tenant's own owner sees that answer counted.
    expect((await as(foreigner).next(projectId)).body.data.progress).toMatchObject({ answered: 1 });

    const forced = await platformAdmin.transition(projectId, 'FEATURE_SELECTION', true);
    expect(forced.status, forced.text).toBe(200);
    expect(await phaseOf(projectId)).toBe('FEATURE_SELECTION');
  });

  it('takes a removed member, and a customer whose assignment went, out at once: NOT_FOUND, nothing written', async () => {
    const projectId = await newProject('Leavers');
    const leaver = await newUser('Leo', 'member');
    const guest = await newUser('Gus', 'customer');
    const assignmentId = await assign(projectId, guest);
    expect((await as(leaver).start(projectId)).status).toBe(200);
    const { problem } = await questionsOf(projectId);
    expect((await as(guest).answer(projectId, problem!, 'Before leaving')).status).toBe(200);

    expect((await call(app.url, `/api/organizations/${owner.organizationId}/members/${leaver.userId}`, { apiKey: owner.apiKey, method: 'DELETE' })).status).toBe(200);
    expect((await call(app.url, `/api/agency-projects/${assignmentId}`, { apiKey: owner.apiKey, method: 'DELETE' })).status).toBe(200);
    const before = await snapshot();
    for (const gone of [leaver, guest]) {
      const api = as(gone);
      expect([
        outcome(await api.next(projectId)),
        outcome(await api.readiness(projectId)),
        outcome(await api.answer(projectId, problem!, 'After leaving')),
        outcome(await api.transition(projectId, 'FEATURE_SELECTION')),
      ]).toEqual(['404 NOT_FOUND', '404 NOT_FOUND', '404 NOT_FOUND', '404 NOT_FOUND']);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses to start, answer or move the flow of an archived project (CONFLICT), whoever asks, and writes nothing', async () => {
    const projectId = await newProject('Archived');
    await assign(projectId, customer);
    const unstarted = await newProject('Archived before it started');
    expect((await as(owner).start(projectId)).status).toBe(200);
    const { problem } = await questionsOf(projectId);
    for (const id of [projectId, unstarted]) {
      expect((await call(app.url, `/api/projects/${id}`, { apiKey: owner.apiKey, method: 'PATCH', body: { status: 'archived' } })).status).toBe(200);
    }
    const before = await snapshot();
    expect(outcome(await as(member).start(unstarted))).toBe('409 CONFLICT');
    expect(outcome(await as(customer).answer(projectId, problem!, 'Too late'))).toBe('409 CONFLICT');
    expect(outcome(await as(owner).answer(projectId, problem!, 'Too late'))).toBe('409 CONFLICT');
    expect(outcome(await as(admin).transition(projectId, 'FEATURE_SELECTION', true))).toBe('409 CONFLICT');
    expect(await snapshot()).toEqual(before);
    // Reading stays open.
    expect((await as(customer).readiness(projectId)).status).toBe(200);
  });
});

describe('concurrent writes to one flow', () => {
  it('start once however many starts race: one 200, the rest CONFLICT, one set of questions', async () => {
    const projectId = await newProject('Raced start');
    const starts = await Promise.all(Array.from({ length: 6 }, (_, index) => as(index % 2 ? member : owner).start(projectId)));
    expect(starts.map(outcome).sort()).toEqual(['200', '409 CONFLICT', '409 CONFLICT', '409 CONFLICT', '409 CONFLICT', '409 CONFLICT']);
    expect(await countRows(app.database.ownerUrl, 'flow_questions where project_id = $1', [projectId])).toBe(9);
  });

  it('move once however many transitions race: one 200, the rest PHASE_INVALID, one set of the next phase\'s questions', async () => {
    const projectId = await newProject('Raced transition');
    await as(owner).start(projectId);
    await answerDiscovery(projectId, owner);
    const moves = await Promise.all(Array.from({ length: 5 }, (_, index) => as(index % 2 ? member : admin).transition(projectId, 'FEATURE_SELECTION', index % 2 ? undefined : true)));
    expect(moves.map(outcome).sort()).toEqual(['200', '400 PHASE_INVALID', '400 PHASE_INVALID', '400 PHASE_INVALID', '400 PHASE_INVALID']);
    const keys = await sqlAsOwner(`select key, count(*)::int as n from flow_questions where project_id = $1 and phase = 'FEATURE_SELECTION' group by key`, [projectId]);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.filter((row: { n: number }) => row.n !== 1)).toEqual([]);
  });

  it('lose no answer when the questions of a phase are answered all at once, by several callers', async () => {
    const projectId = await newProject('Raced answers');
    await assign(projectId, customer);
    await as(owner).start(projectId);
    const callers = [owner, member, customer, admin];
    const answered = await Promise.all(Object.entries(await questionsOf(projectId)).map(([key, id], index) => as(callers[index % callers.length]!).answer(projectId, id, discoveryAnswers[key])));
    expect(answered.map((response) => response.status)).toEqual(answered.map(() => 200));
    const project = (await call(app.url, `/api/projects/${projectId}`, { apiKey: owner.apiKey })).body.data;
    expect(project.progress.byPhase.discovery).toBe(1);
    expect(Object.keys(project.discoveryOutput.answers).sort()).toEqual(Object.keys(discoveryAnswers).sort());
    expect((await as(customer).readiness(projectId)).body.data).toMatchObject({ readinessScore: 1, isReady: true });
  });

  it('settle an answer racing a transition: the answer lands in the phase it was given in, or is refused as of an earlier phase', async () => {
    for (let round = 0; round < 3; round += 1) {
      const projectId = await newProject(`Answer against a move ${round}`);
      await as(owner).start(projectId);
      const { problem } = await questionsOf(projectId);
      const [moved, answered] = await whileTransactionHolds(
        app.database.ownerUrl,
        (holder) => holder.query('select 1 from projects where id = $1 for update', [projectId]),
        () => Promise.all([as(admin).transition(projectId, 'FEATURE_SELECTION', true), as(member).answer(projectId, problem!, 'Raced answer')]),
      );
      expect(moved.status, moved.text).toBe(200);
      expect(['200', '409 CONFLICT']).toContain(outcome(answered));
      const stored = await countRows(app.database.ownerUrl, 'flow_answers where project_id = $1', [projectId]);
      const project = (await call(app.url, `/api/projects/${projectId}`, { apiKey: owner.apiKey })).body.data;
      expect(project.phase).toBe('FEATURE_SELECTION');
      if (answered.status === 200) {
        expect(stored).toBe(1);
        expect(project.discoveryOutput.answers).toEqual({ problem: 'Raced answer' });
      } else {
        expect(stored).toBe(0);
        expect(answered.body.error.message).toContain('belongs to phase DISCOVERY');
      }
    }
  });

  it('settle an answer racing the project\'s DELETE: NOT_FOUND after it, or counted among the rows it deleted', async () => {
    const projectId = await newProject('Answer against a delete');
    await as(owner).start(projectId);
    const { problem } = await questionsOf(projectId);
    const [deleted, answered] = await whileTransactionHolds(
      app.database.ownerUrl,
      (holder) => holder.query('select 1 from projects where id = $1 for update', [projectId]),
      () => Promise.all([call(app.url, `/api/projects/${projectId}`, { apiKey: owner.apiKey, method: 'DELETE' }), as(member).answer(projectId, problem!, 'Raced answer')]),
    );
    expect(deleted.status, deleted.text).toBe(200);
    expect(['200', '404 NOT_FOUND']).toContain(outcome(answered));
    expect(deleted.body.data.rowsDeleted).toBe(1 + 9 + (answered.status === 200 ? 1 : 0));
    expect(await countRows(app.database.ownerUrl, 'flow_answers where project_id = $1', [projectId])).toBe(0);
    expect(await countRows(app.database.ownerUrl, 'flow_questions where project_id = $1', [projectId])).toBe(0);
  });

  /**
   * `write` (a flow write of a caller about to lose access) reads the caller's standing, then waits
   * on flow_questions (held by the test) while `revoke` takes that standing away. Either the
   * revocation waits for the write in flight (and the write lands while the caller still had
   * access), or the revocation answers first and the write must not land after it.
   */
  async function raceAgainstRevocation(projectId: string, write: () => Promise<ApiResponse>, revoke: () => Promise<ApiResponse>) {
    // flow_questions is held by the test meanwhile: it is read once the write is over.
    const rows = async () => {
      const [answers] = await sqlAsOwner(`select coalesce(md5(string_agg(to_jsonb(t)::text, '|' order by t::text)), '') as digest from flow_answers t`);
      return { phase: await phaseOf(projectId), flow_answers: answers.digest, ...(await tableSnapshot(app.database.ownerUrl)) };
    };
    const gate = await lockTableUntilReleased(app.database.ownerUrl, 'flow_questions');
    const order: string[] = [];
    try {
      const writing = write().then((response) => (order.push(`write ${outcome(response)}`), response));
      await gate.untilWaitedOn('the write waits on flow_questions');
      const revoking = revoke().then((response) => (order.push(`revocation ${outcome(response)}`), response));
      // The revocation either answers now or waits for the write in flight.
      await Promise.race([revoking, untilLockWaiters(app.database.ownerUrl, 2)]);
      const whenRevoked = order.includes('revocation 200') ? await rows() : undefined;
      await gate.release();
      const [written, revoked] = await Promise.all([writing, revoking]);
      expect(revoked.status, revoked.text).toBe(200);
      if (whenRevoked) {
        // Revoked first: the write is refused as of a caller who no longer sees the project, and nothing of it lands.
        expect({ order, rows: await rows() }).toEqual({ order: ['revocation 200', 'write 404 NOT_FOUND'], rows: whenRevoked });
      } else {
        // The revocation waited for the write in flight: the write landed while the caller had access.
        // (Which answer reaches this test first is up to the two sockets, not the database.)
        expect([written.status, revoked.status]).toEqual([200, 200]);
      }
      return written;
    } finally {
      await gate.release();
    }
  }

  it('let no transition of a removed member land after the removal has answered', async () => {
    const projectId = await newProject('Move against a removal');
    const leaver = await newUser('Lou', 'member');
    await as(owner).start(projectId);
    await answerDiscovery(projectId, owner);
    const written = await raceAgainstRevocation(
      projectId,
      () => as(leaver).transition(projectId, 'FEATURE_SELECTION'),
      () => call(app.url, `/api/organizations/${owner.organizationId}/members/${leaver.userId}`, { apiKey: owner.apiKey, method: 'DELETE' }),
    );
    expect(await phaseOf(projectId)).toBe(written.status === 200 ? 'FEATURE_SELECTION' : 'DISCOVERY');
  });

  it('let no start of a removed member land after the removal has answered', async () => {
    const projectId = await newProject('Start against a removal');
    const leaver = await newUser('Dee', 'member');
    const written = await raceAgainstRevocation(
      projectId,
      () => as(leaver).start(projectId),
      () => call(app.url, `/api/organizations/${owner.organizationId}/members/${leaver.userId}`, { apiKey: owner.apiKey, method: 'DELETE' }),
    );
    expect(await phaseOf(projectId)).toBe(written.status === 200 ? 'DISCOVERY' : 'CREATED');
  });

  for (const revocation of ['the customer\'s removal', 'the assignment\'s removal'] as const) {
    it(`let no answer of a customer land after ${revocation} has answered`, async () => {
      const projectId = await newProject(`Answer against ${revocation}`);
      const guest = await newUser('Gia', 'customer');
      const assignmentId = await assign(projectId, guest);
      await as(owner).start(projectId);
      const { problem } = await questionsOf(projectId);
      const written = await raceAgainstRevocation(
        projectId,
        () => as(guest).answer(projectId, problem!, 'Answered while leaving'),
        () =>
          revocation === 'the customer\'s removal'
            ? call(app.url, `/api/organizations/${owner.organizationId}/members/${guest.userId}`, { apiKey: owner.apiKey, method: 'DELETE' })
            : call(app.url, `/api/agency-projects/${assignmentId}`, { apiKey: owner.apiKey, method: 'DELETE' }),
      );
      expect(await countRows(app.database.ownerUrl, 'flow_answers where project_id = $1', [projectId])).toBe(written.status === 200 ? 1 : 0);
    });
  }

  it('refuse NOT_FOUND a write that waited for the project while the caller lost access, and write nothing of it', async () => {
    const projectId = await newProject('Waiting writes');
    const leaver = await newUser('Lia', 'member');
    const guest = await newUser('Gil', 'customer');
    const assignmentId = await assign(projectId, guest);
    await as(owner).start(projectId);
    await answerDiscovery(projectId, owner);
    const { problem } = await questionsOf(projectId);
    const cases = [
      { write: () => as(guest).answer(projectId, problem!, 'Answered after the assignment went'), revoke: () => call(app.url, `/api/agency-projects/${assignmentId}`, { apiKey: owner.apiKey, method: 'DELETE' }) },
      { write: () => as(leaver).transition(projectId, 'FEATURE_SELECTION'), revoke: () => call(app.url, `/api/organizations/${owner.organizationId}/members/${leaver.userId}`, { apiKey: owner.apiKey, method: 'DELETE' }) },
    ];
    for (const { write, revoke } of cases) {
      const before = await snapshot();
      // Another write holds the project; this one waits for it while the caller's access is taken away.
      const holder = new pg.Client({ connectionString: app.database.ownerUrl });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select 1 from projects where id = $1 for update', [projectId]);
        const writing = write();
        await untilLockWaiters(app.database.ownerUrl, 1);
        expect((await revoke()).status).toBe(200);
        const revoked = await snapshot();
        await holder.query('commit');
        expect(outcome(await writing)).toBe('404 NOT_FOUND');
        expect(await snapshot()).toEqual(revoked);
        expect(revoked).not.toEqual(before);
      } finally {
        await holder.end();
      }
    }
    expect(await phaseOf(projectId)).toBe('DISCOVERY');
  });
});

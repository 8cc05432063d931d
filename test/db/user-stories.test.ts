import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../control-plane/auth/principal.ts';
import type { Database } from '../../control-plane/db/database.ts';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { withTenant } from '../../control-plane/db/tenant-transaction.ts';
import { deleteProjectForCaller } from '../../control-plane/domains/projects/projects.service.ts';
import { compileInputOf } from '../../control-plane/domains/specifications/specifications.service.ts';
import { userStoryInput, userStoryListInput } from '../../control-plane/domains/user-stories/user-stories.schema.ts';
import {
  createUserStoryForCaller,
  deleteUserStoryForCaller,
  getUserStoryForCaller,
  listUserStoriesForCaller,
  replaceUserStoryForCaller,
  updateUserStoryForCaller,
} from '../../control-plane/domains/user-stories/user-stories.service.ts';
import { insertTenantWithUser, ownerQuery } from '../helpers/owner-sql.ts';
import { tableSnapshot } from '../helpers/table-snapshot.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * The user stories service (Variant A's /userstories, DESIGN §5.1–5.2) as the app role runs it in a
 * request's tenant transaction: who sees and writes a story, the ids clients choose, PUT's defaults
 * and PATCH's no-op, the list's order and filter, and the rows a project delete and a compile take.
 */
let database: TestDatabase;
let app: DatabaseHandle;
const sql = (text: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, text, values);

type Caller = Principal;
const callerOf = (tenantId: string, userId: string): Caller => ({ tenantId, homeTenantId: tenantId, userId, isPlatformAdmin: false, via: 'api_key' });
/** Runs `work` as a request of `caller` does: in one transaction of the app role, confined to the caller's tenant. */
const as = <T>(caller: Caller, work: (db: Kysely<Database>, principal: Principal) => Promise<T>) => withTenant(app.db, caller.tenantId, (trx) => work(trx, caller));
const input = (body: Record<string, unknown>) => userStoryInput.parse(body);

let owner: Caller;
let outsider: Caller;
let customer: Caller;
let stranger: Caller;
let projectId: string;
let otherProjectId: string;
let strangersProjectId: string;
let newProject: () => Promise<string>;

/** A tenant with an organization its user owns, and a project in it. */
async function tenantWithProject(email: string) {
  const { tenantId, userId } = await insertTenantWithUser(database.ownerUrl, email);
  const [organization] = await sql(`insert into organizations (tenant_id, name, slug, owner_id) values ($1, 'Org', $2, $3) returning id`, [tenantId, `org-${randomUUID()}`, userId]);
  await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'owner')`, [tenantId, organization.id, userId]);
  const newProject = async () => (await sql(`insert into projects (tenant_id, organization_id, name) values ($1, $2, 'P') returning id`, [tenantId, organization.id]))[0].id as string;
  return { tenantId, userId, organizationId: organization.id as string, projectId: await newProject(), newProject };
}

async function userOf(tenantId: string, name: string): Promise<string> {
  const [user] = await sql(`insert into users (tenant_id, email, name) values ($1, $2, $3) returning id`, [tenantId, `${name}-${randomUUID()}@stories.test`, name]);
  return user.id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  app = createDatabase(database.appUrl, { max: 4 });
  const mine = await tenantWithProject('owner@stories.test');
  owner = callerOf(mine.tenantId, mine.userId);
  projectId = mine.projectId;
  newProject = mine.newProject;
  otherProjectId = await newProject();
  outsider = callerOf(mine.tenantId, await userOf(mine.tenantId, 'outsider'));
  customer = callerOf(mine.tenantId, await userOf(mine.tenantId, 'customer'));
  await sql(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'customer')`, [mine.tenantId, mine.organizationId, customer.userId]);
  await sql(`insert into agency_project_assignments (tenant_id, organization_id, project_id, customer_user_id) values ($1, $2, $3, $4)`, [mine.tenantId, mine.organizationId, projectId, customer.userId]);
  const theirs = await tenantWithProject('stranger@stories.test');
  stranger = callerOf(theirs.tenantId, theirs.userId);
  strangersProjectId = theirs.projectId;
});

afterAll(async () => {
  await app?.db.destroy();
});

describe('creating a story', () => {
  it("takes the id the client chose, or makes one, and gives what it leaves out its default", async () => {
    const id = randomUUID();
    const chosen = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ id, projectId, title: 'Book a slot', description: 'Online', priority: 'high', status: 'ready', acceptanceCriteria: [' Free slots show '] })));
    expect(chosen).toMatchObject({ id, projectId, title: 'Book a slot', description: 'Online', priority: 'high', status: 'ready', acceptanceCriteria: ['Free slots show'] });
    const made = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId, title: 'Cancel' })));
    expect(made.id).not.toBe(id);
    expect(made).toEqual({ id: made.id, projectId, title: 'Cancel', priority: 'medium', status: 'draft', acceptanceCriteria: [], createdAt: made.createdAt, updatedAt: made.createdAt });
    expect(await sql('select created_by from user_stories where id = $1', [made.id])).toEqual([{ created_by: owner.userId }]);
  });

  it("refuses an id already taken, in its tenant or another's, as CONFLICT, and writes nothing", async () => {
    const taken = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId, title: 'First' })));
    const before = await tableSnapshot(database.ownerUrl);
    for (const [caller, project] of [[owner, projectId], [stranger, strangersProjectId]] as const) {
      await expect(as(caller, (db, principal) => createUserStoryForCaller(db, principal, input({ id: taken.id, projectId: project, title: 'Second' })))).rejects.toMatchObject({
        code: 'CONFLICT',
        message: 'A user story with this id already exists',
      });
    }
    expect(await tableSnapshot(database.ownerUrl)).toEqual(before);
  });

  it('answers creates racing with one id exactly once 201 and otherwise CONFLICT, never a unique violation', async () => {
    // Both unique indexes of the id (the key, and the tenant's) arbitrate the insert: racers that
    // pass the key's check together must still end in CONFLICT, not a raw 23505 (an INTERNAL_ERROR).
    const racers = 4;
    const raced = await newProject();
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 400; round += 1) {
      const id = randomUUID();
      const results = await Promise.allSettled(Array.from({ length: racers }, () => as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ id, projectId: raced, title: 'Raced' })))));
      const outcome = results.map((result) => (result.status === 'fulfilled' ? 'created' : String((result.reason as { code?: string }).code))).sort().join(',');
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      await sql('delete from user_stories where id = $1', [id]);
    }
    expect(Object.fromEntries(outcomes)).toEqual({ 'CONFLICT,CONFLICT,CONFLICT,created': 400 });
  }, 120_000);

  it('is NOT_FOUND in a project the caller does not see, and FORBIDDEN to the project\'s customer', async () => {
    const before = await tableSnapshot(database.ownerUrl);
    for (const caller of [outsider, stranger]) {
      await expect(as(caller, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId, title: 'Mine' })))).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'The project was not found' });
    }
    await expect(as(customer, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId, title: 'Mine' })))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await tableSnapshot(database.ownerUrl)).toEqual(before);
  });
});

describe("a project's share of stories", () => {
  it('is at most 200 (each story may hold some 200 KB of criteria, and a compile carries them all twice), counted under a lock so racing creates cannot pass it', async () => {
    const full = await newProject();
    await sql(`insert into user_stories (tenant_id, project_id, title, acceptance_criteria) select $1, $2, 'Filler ' || n, '[]' from generate_series(1, 199) as n`, [owner.tenantId, full]);
    const results = await Promise.allSettled([1, 2, 3].map((n) => as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId: full, title: `Racer ${n}` })))));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results.filter((candidate) => candidate.status === 'rejected')) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'CONFLICT', message: 'The project has 200 user stories, the most it may hold; delete one to add another' });
    }
    expect(await sql('select count(*)::int as count from user_stories where project_id = $1', [full])).toEqual([{ count: 200 }]);
    // Another project of the tenant is not held to this one's count; a story deleted makes room.
    const elsewhere = await newProject();
    expect(await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId: elsewhere, title: 'Elsewhere' })))).toMatchObject({ projectId: elsewhere });
    const [one] = await sql(`select id from user_stories where project_id = $1 limit 1`, [full]);
    await as(owner, (db, principal) => deleteUserStoryForCaller(db, principal, one.id));
    expect(await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId: full, title: 'In its place' })))).toMatchObject({ projectId: full });
    // Out of the way of the lists below, which read every story the owner sees.
    await sql('delete from user_stories where project_id in ($1, $2)', [full, elsewhere]);
  });
});

describe('a story the caller does not see', () => {
  it('is NOT_FOUND to another tenant and to a non-member, as an unknown id is, for reading and every write, and stays as it was', async () => {
    const story = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId, title: 'Private' })));
    const before = await tableSnapshot(database.ownerUrl);
    const notFound = { code: 'NOT_FOUND', message: 'The user story was not found' };
    for (const [caller, id] of [[stranger, story.id], [outsider, story.id], [owner, randomUUID()]] as const) {
      await expect(as(caller, (db, principal) => getUserStoryForCaller(db, principal, id))).rejects.toMatchObject(notFound);
      await expect(as(caller, (db, principal) => replaceUserStoryForCaller(db, principal, id, input({ projectId, title: 'Taken over' })))).rejects.toMatchObject(notFound);
      await expect(as(caller, (db, principal) => updateUserStoryForCaller(db, principal, id, { title: 'Taken over' }))).rejects.toMatchObject(notFound);
      await expect(as(caller, (db, principal) => deleteUserStoryForCaller(db, principal, id))).rejects.toMatchObject(notFound);
    }
    expect(await tableSnapshot(database.ownerUrl)).toEqual(before);
    // The project's customer reads it, and writes nothing.
    expect(await as(customer, (db, principal) => getUserStoryForCaller(db, principal, story.id))).toEqual(story);
    await expect(as(customer, (db, principal) => updateUserStoryForCaller(db, principal, story.id, { title: 'Mine now' }))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(as(customer, (db, principal) => deleteUserStoryForCaller(db, principal, story.id))).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect(await tableSnapshot(database.ownerUrl)).toEqual(before);
  });
});

describe('changing a story', () => {
  it('PUT replaces it whole, what the body leaves out taking its default; its id and project stay', async () => {
    const full = { projectId, title: 'Remind', description: 'By email', priority: 'critical', status: 'in_progress', acceptanceCriteria: ['A day ahead'] };
    const story = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input(full)));
    const replaced = await as(owner, (db, principal) => replaceUserStoryForCaller(db, principal, story.id, input({ projectId, title: 'Remind by text' })));
    expect(replaced).toEqual({ id: story.id, projectId, title: 'Remind by text', priority: 'medium', status: 'draft', acceptanceCriteria: [], createdAt: story.createdAt, updatedAt: replaced.updatedAt });
    expect(replaced.updatedAt >= story.updatedAt).toBe(true);

    const before = await tableSnapshot(database.ownerUrl);
    await expect(as(owner, (db, principal) => replaceUserStoryForCaller(db, principal, story.id, input({ ...full, id: randomUUID() })))).rejects.toMatchObject({ code: 'VALIDATION_ERROR', details: { issues: [{ field: 'id' }] } });
    await expect(as(owner, (db, principal) => replaceUserStoryForCaller(db, principal, story.id, input({ ...full, projectId: otherProjectId })))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ field: 'projectId' }] },
    });
    expect(await tableSnapshot(database.ownerUrl)).toEqual(before);
    expect(await as(owner, (db, principal) => replaceUserStoryForCaller(db, principal, story.id, input({ ...full, id: story.id })))).toMatchObject({ ...full, id: story.id });
  });

  it('PATCH changes only what it names; naming nothing, or only the same project, changes nothing, updatedAt included', async () => {
    const story = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId, title: 'Pay', description: 'By card', acceptanceCriteria: ['Card accepted'] })));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await as(owner, (db, principal) => updateUserStoryForCaller(db, principal, story.id, {}))).toEqual(story);
    expect(await as(owner, (db, principal) => updateUserStoryForCaller(db, principal, story.id, { projectId }))).toEqual(story);

    const ready = await as(owner, (db, principal) => updateUserStoryForCaller(db, principal, story.id, { status: 'ready', description: null }));
    const { description: _gone, ...unchanged } = story;
    expect(ready).toEqual({ ...unchanged, status: 'ready', updatedAt: ready.updatedAt });
    expect(ready.updatedAt > story.updatedAt).toBe(true);

    await expect(as(owner, (db, principal) => updateUserStoryForCaller(db, principal, story.id, { projectId: otherProjectId, title: 'Moved' }))).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ field: 'projectId' }] },
    });
    expect(await as(owner, (db, principal) => getUserStoryForCaller(db, principal, story.id))).toEqual(ready);
  });

  it('DELETE removes it and answers nothing', async () => {
    const story = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId, title: 'Gone soon' })));
    expect(await as(owner, (db, principal) => deleteUserStoryForCaller(db, principal, story.id))).toBeUndefined();
    await expect(as(owner, (db, principal) => getUserStoryForCaller(db, principal, story.id))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('listing stories', () => {
  it('pages them by priority rank, ties by id, in the order asked, within the project asked for and the projects the caller sees', async () => {
    const listed = await newProject();
    const priorities = ['low', 'critical', 'medium', 'high', 'critical', 'low', 'medium'] as const;
    const made = [];
    for (const priority of priorities) made.push(await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId: listed, title: `A ${priority}`, priority }))));
    const rank = (priority: string) => ['low', 'medium', 'high', 'critical'].indexOf(priority);
    const expected = [...made].sort((a, b) => rank(b.priority) - rank(a.priority) || (a.id < b.id ? 1 : -1)).map((story) => story.id);

    const pages = [];
    for (const page of [1, 2, 3]) {
      const query = userStoryListInput.parse({ page: String(page), pageSize: '3', sort: 'priority', order: 'desc', projectId: listed });
      const answer = await as(owner, (db, principal) => listUserStoriesForCaller(db, principal, query));
      expect(answer).toMatchObject({ total: priorities.length, page, pageSize: 3 });
      pages.push(...answer.items.map((story) => story.id));
    }
    expect(pages).toEqual(expected);
    // Ascending is the same list backwards: ties by id ascending too.
    const ascending = await as(owner, (db, principal) => listUserStoriesForCaller(db, principal, userStoryListInput.parse({ sort: 'priority', projectId: listed, pageSize: '100' })));
    expect(ascending.items.map((story) => story.id)).toEqual([...expected].reverse());

    // Unfiltered, each caller's list holds the projects they see only.
    const everyId = async (caller: Caller) => (await as(caller, (db, principal) => listUserStoriesForCaller(db, principal, userStoryListInput.parse({ pageSize: '100' })))).items;
    expect((await everyId(owner)).map((story) => story.projectId)).toEqual(expect.arrayContaining([projectId, listed]));
    expect(new Set((await everyId(customer)).map((story) => story.projectId))).toEqual(new Set([projectId]));
    expect(await everyId(outsider)).toEqual([]);
    expect(await everyId(stranger)).toEqual([]);
    // A project the caller does not see filters to nothing, as one without stories does.
    expect((await as(stranger, (db, principal) => listUserStoriesForCaller(db, principal, userStoryListInput.parse({ projectId: listed })))).total).toBe(0);
  });
});

describe("a project's stories", () => {
  it("feed its compile, oldest first, and a project without any compiles from the input it always had", async () => {
    const project = await sql('select * from projects where id = $1', [otherProjectId]);
    for (const title of ['One', 'Two']) await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId: otherProjectId, title, priority: 'low', acceptanceCriteria: [`${title} works`] })));
    const compileInput = await as(owner, (db) => compileInputOf(db, project[0]));
    expect(compileInput.userStories).toEqual([
      { title: 'One', description: null, priority: 'low', acceptanceCriteria: ['One works'] },
      { title: 'Two', description: null, priority: 'low', acceptanceCriteria: ['Two works'] },
    ]);
    const [bare] = await sql('select * from projects where id = $1', [strangersProjectId]);
    expect(await as(stranger, (db) => compileInputOf(db, bare))).not.toHaveProperty('userStories');
  });

  it('go with it when it is deleted, and the delete reports user_stories', async () => {
    const story = await as(owner, (db, principal) => createUserStoryForCaller(db, principal, input({ projectId: otherProjectId, title: 'Last' })));
    const deleted = await as(owner, (db, principal) => deleteProjectForCaller(db, principal, otherProjectId));
    expect(deleted.deletedTables).toContain('user_stories');
    expect(await sql('select id from user_stories where project_id = $1', [otherProjectId])).toEqual([]);
    await expect(as(owner, (db, principal) => getUserStoryForCaller(db, principal, story.id))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

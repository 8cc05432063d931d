import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../control-plane/db/kysely-client.ts';
import { migratorFor } from '../../control-plane/db/migrate.ts';
import { asAppRoleInTenant } from '../helpers/app-role-sql.ts';
import { insertTenantWithUser, ownerQuery } from '../helpers/owner-sql.ts';
import { describeSchema } from '../helpers/schema-snapshot.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * The flow's tables (migration 0029): a project's questions and answers are its tenant's alone,
 * the app role may do to them what requests do and no more, and the migration goes down and up
 * again to the same schema.
 */
const MIGRATION = '0029_project_flow_questions_and_answers';
let database: TestDatabase;
type Flow = { tenantId: string; userId: string; projectId: string; questionId: string; answerId: string };
let mine: Flow;
let theirs: Flow;

const asOwner = (sql: string, values: unknown[] = []) => ownerQuery(database.ownerUrl, sql, values);

async function tenantWithFlow(email: string): Promise<Flow> {
  const { tenantId, userId } = await insertTenantWithUser(database.ownerUrl, email);
  const [project] = await asOwner(`insert into projects (tenant_id, name) values ($1, 'p') returning id`, [tenantId]);
  const [question] = await asOwner(
    `insert into flow_questions (tenant_id, project_id, phase, key, position, text, description, variants, answer_type, required, weight)
       values ($1, $2, 'DISCOVERY', 'problem', 0, 'What?', 'd', '[]', 'text', true, 3) returning id`,
    [tenantId, project.id],
  );
  const [answer] = await asOwner(`insert into flow_answers (tenant_id, project_id, question_id, value, answered_by) values ($1, $2, $3, '"x"', $4) returning id`, [
    tenantId,
    project.id,
    question.id,
    userId,
  ]);
  return { tenantId, userId, projectId: project.id, questionId: question.id, answerId: answer.id };
}

beforeAll(async () => {
  database = await createTestDatabase();
  mine = await tenantWithFlow('mine@flow.test');
  theirs = await tenantWithFlow('theirs@flow.test');
});

describe("the app role and another tenant's flow", () => {
  const inMine = (sql: string, values: unknown[] = []) => asAppRoleInTenant(database.appUrl, mine.tenantId, sql, values);

  it('reads, changes and deletes none of its questions and answers', async () => {
    expect(await inMine('select 1 from flow_questions where project_id = $1', [theirs.projectId])).toBe(0);
    expect(await inMine('select 1 from flow_answers where project_id = $1', [theirs.projectId])).toBe(0);
    expect(await inMine(`update flow_questions set prefill = '{}' where id = $1`, [theirs.questionId])).toBe(0);
    expect(await inMine(`update flow_answers set value = '"y"' where id = $1`, [theirs.answerId])).toBe(0);
    expect(await inMine('delete from flow_answers where id = $1', [theirs.answerId])).toBe(0);
    expect(await inMine('delete from flow_questions where id = $1', [theirs.questionId])).toBe(0);
    // Its own, the same statements reach.
    expect(await inMine('select 1 from flow_questions where project_id = $1', [mine.projectId])).toBe(1);
    expect(await inMine('select 1 from flow_answers where project_id = $1', [mine.projectId])).toBe(1);
  });

  it('writes no row into it, nor an answer of its own to a question of it', async () => {
    const insertQuestion = `insert into flow_questions (tenant_id, project_id, phase, key, position, text, description, variants, answer_type, required, weight)
                              values ($1, $2, 'DISCOVERY', 'audience', 1, 'Who?', 'd', '[]', 'text', true, 1)`;
    expect(await inMine(insertQuestion, [theirs.tenantId, theirs.projectId])).toBe('42501');
    expect(await inMine(`insert into flow_answers (tenant_id, project_id, question_id, value) values ($1, $2, $3, '"y"')`, [theirs.tenantId, theirs.projectId, theirs.questionId])).toBe('42501');
    // Its own tenant named, the other's project or question is no key of it.
    expect(await inMine(insertQuestion, [mine.tenantId, theirs.projectId])).toBe('23503');
    expect(await inMine(`insert into flow_answers (tenant_id, project_id, question_id, value) values ($1, $2, $3, '"y"')`, [mine.tenantId, mine.projectId, theirs.questionId])).toBe('23503');
  });
});

describe('what the app role may do to the flow tables: what requests do, no more', () => {
  const inMine = (sql: string, values: unknown[] = []) => asAppRoleInTenant(database.appUrl, mine.tenantId, sql, values);

  it('replaces an answer and a prefill, and deletes both tables\' rows (a project delete does)', async () => {
    expect(await inMine(`update flow_questions set prefill = '{"value": "x", "confidence": 0.5, "source": "s", "explanation": "e"}' where id = $1`, [mine.questionId])).toBe(1);
    expect(
      await inMine(
        `insert into flow_answers (tenant_id, project_id, question_id, value) values ($1, $2, $3, '"z"')
           on conflict (question_id, tenant_id) do update set value = excluded.value, selected_variant = 'original', confidence = 0.5, notes = 'n', answered_by = $4, updated_at = now()
           returning id`,
        [mine.tenantId, mine.projectId, mine.questionId, mine.userId],
      ),
    ).toBe(1);
    expect(await inMine('delete from flow_answers where project_id = $1', [mine.projectId])).toBe(1);
    expect(await inMine('delete from flow_questions where project_id = $1', [mine.projectId])).toBe(1);
  });

  it('cannot rewrite what a question asks, move a question or an answer, or backdate an answer', async () => {
    const [otherProject] = await asOwner(`insert into projects (tenant_id, name) values ($1, 'q') returning id`, [mine.tenantId]);
    const refused = {
      options: await inMine(`update flow_questions set options = '[]' where id = $1`, [mine.questionId]),
      suppressed: await inMine('update flow_questions set suppressed = true where id = $1', [mine.questionId]),
      required: await inMine('update flow_questions set required = false where id = $1', [mine.questionId]),
      phase: await inMine(`update flow_questions set phase = 'PLANNING' where id = $1`, [mine.questionId]),
      questionProject: await inMine('update flow_questions set project_id = $2 where id = $1', [mine.questionId, otherProject.id]),
      answerProject: await inMine('update flow_answers set project_id = $2 where id = $1', [mine.answerId, otherProject.id]),
      answerQuestion: await inMine('update flow_answers set question_id = gen_random_uuid() where id = $1', [mine.answerId]),
      answeredAt: await inMine(`update flow_answers set created_at = now() - interval '1 year' where id = $1`, [mine.answerId]),
    };
    expect(refused).toEqual({
      options: '42501',
      suppressed: '42501',
      required: '42501',
      phase: '42501',
      questionProject: '42501',
      answerProject: '42501',
      answerQuestion: '42501',
      answeredAt: '42501',
    });
  });
});

describe(`migration ${MIGRATION}`, () => {
  let owner: DatabaseHandle;
  afterAll(() => owner?.db.destroy());

  it('goes down and up again to the same schema, and down leaves no flow table, policy or grant behind', async () => {
    // Its own database: going down drops the flow tables with every row.
    const scratch = await createTestDatabase();
    owner = createDatabase(scratch.ownerUrl, { max: 2 });
    const migrator = migratorFor(owner.db);
    const before = await describeSchema(scratch.ownerUrl);
    // Down to the migration before it (the later ones first), then up again to the latest.
    const down = await migrator.migrateTo('0028_executions_name_the_key_that_started_them');
    expect(down.error).toBeUndefined();
    expect(down.results?.map((result) => [result.migrationName, result.direction, result.status])).toContainEqual([MIGRATION, 'Down', 'Success']);
    const without = await describeSchema(scratch.ownerUrl);
    expect(without).not.toMatch(/flow_/);
    const up = await migrator.migrateToLatest();
    expect(up.error).toBeUndefined();
    expect(await describeSchema(scratch.ownerUrl)).toBe(before);
  });
});

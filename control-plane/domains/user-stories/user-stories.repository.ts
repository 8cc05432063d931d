import { sql, type Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database, UserStoryPriority, UserStoryRow, UserStoryStatus } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';
import { projectIdsInScope, type ProjectScope } from '../projects/projects.repository.ts';
import { userStoryPriorities, userStoryStatuses, type UserStorySortField } from './user-stories.schema.ts';

/** What a PUT sets, and a PATCH sets some of. */
export interface UserStoryContent {
  title: string;
  description: string | null;
  priority: UserStoryPriority;
  status: UserStoryStatus;
  acceptanceCriteria: string[];
}

/**
 * Inserts the story, or answers undefined when its id is taken (by any story: the id is the
 * table's primary key). `on conflict do nothing` rather than catching the unique violation: the
 * failed insert would abort the request's transaction. No conflict target: the id is unique twice
 * (the key, and `(tenant_id, id)` that keys within the tenant reference), and with only the key as
 * the arbiter, two creates of one id that pass its check together leave the later to fail on the
 * other index, a unique violation instead of CONFLICT.
 */
export async function insertUserStory(
  db: Kysely<Database>,
  values: UserStoryContent & { id: string | undefined; tenantId: string; projectId: string; createdBy: string | null },
): Promise<UserStoryRow | undefined> {
  return db
    .insertInto('user_stories')
    .values({
      ...(values.id ? { id: values.id } : {}),
      tenant_id: values.tenantId,
      project_id: values.projectId,
      title: values.title,
      description: values.description,
      priority: values.priority,
      status: values.status,
      acceptance_criteria: JSON.stringify(values.acceptanceCriteria),
      created_by: values.createdBy,
    })
    .onConflict((conflict) => conflict.doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findUserStory(db: Kysely<Database>, tenantId: string, id: string, lock?: 'update'): Promise<UserStoryRow | undefined> {
  let query = db.selectFrom('user_stories').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Sets the fields given, and stamps `updated_at` by the database's clock. */
export async function updateUserStory(db: Kysely<Database>, tenantId: string, id: string, changes: Partial<UserStoryContent>): Promise<UserStoryRow> {
  const { acceptanceCriteria, ...columns } = changes;
  return db
    .updateTable('user_stories')
    .set({ ...columns, ...(acceptanceCriteria ? { acceptance_criteria: JSON.stringify(acceptanceCriteria) } : {}), updated_at: databaseNow })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteUserStory(db: Kysely<Database>, tenantId: string, id: string): Promise<number> {
  const result = await db.deleteFrom('user_stories').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A rank in `values`' order (1 = the first), so `low < medium < high < critical` sorts as meant, not as spelt. */
const rankOf = (column: 'priority' | 'status', values: readonly string[]) => sql<number>`array_position(${sql.val([...values])}::text[], ${sql.ref(column)})`;

const orderExpressions = {
  createdAt: sql.ref('created_at'),
  updatedAt: sql.ref('updated_at'),
  title: sql.ref('title'),
  priority: rankOf('priority', userStoryPriorities),
  status: rankOf('status', userStoryStatuses),
} satisfies Record<UserStorySortField, unknown>;

/**
 * The stories of the projects the scope sees (of one of them, with `projectId`), ordered by the
 * sort field and then by id, both in `order`, so equal values never swap places between pages.
 */
export async function listUserStories(
  db: Kysely<Database>,
  scope: ProjectScope,
  filter: Paging & { projectId?: string | undefined; sort: UserStorySortField; order: 'asc' | 'desc' },
) {
  let query = db.selectFrom('user_stories').where('tenant_id', '=', scope.tenantId).where('project_id', 'in', projectIdsInScope(db, scope));
  if (filter.projectId) query = query.where('project_id', '=', filter.projectId);
  return pagedRows(query.selectAll().orderBy(orderExpressions[filter.sort], filter.order).orderBy('id', filter.order), query, filter);
}

/**
 * Holds the project's stories still for a count: a create takes it (until its transaction ends)
 * before counting them, so two creates at the project's last free place take turns, and the later
 * finds it taken. An advisory lock, not a row lock on the project: nothing else waits for it.
 */
export async function lockStoriesOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`user-stories:${tenantId}:${projectId}`}, 0))`.execute(db);
}

export async function countUserStoriesOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<number> {
  const { count } = await db.selectFrom('user_stories').select((eb) => eb.fn.countAll<string>().as('count')).where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirstOrThrow();
  return Number(count);
}

/** The project's stories, oldest first: what a compile of its specification takes. */
export async function userStoriesOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<UserStoryRow[]> {
  return db.selectFrom('user_stories').selectAll().where('tenant_id', '=', tenantId).where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
}

/** Deletes the project's stories; answers how many went. */
export async function deleteUserStoriesOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<number> {
  const result = await db.deleteFrom('user_stories').where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

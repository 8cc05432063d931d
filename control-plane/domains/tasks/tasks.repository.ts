import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database, TaskAction, TaskPriority, TaskRow, TaskStatus, TaskSubmissionRow, TaskType } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import type { Paging } from '../../http/paging.ts';
import { projectIdsInScope, type ProjectScope } from '../projects/projects.repository.ts';

export async function insertTask(
  db: Kysely<Database>,
  values: {
    tenantId: string;
    projectId: string;
    type: TaskType;
    title: string;
    description: string;
    status: TaskStatus;
    priority: TaskPriority;
    assigneeType: 'user' | 'agent' | null;
    assigneeId: string | null;
    actions: TaskAction[];
    targets: Array<{ type: string; id: string }>;
    dueDate: string | null;
    createdBy: string | null;
    /** What in the flow's answers the task stands for (flow-tasks.ts); none for a task made through POST /tasks. */
    origin?: string;
  },
): Promise<TaskRow> {
  return db
    .insertInto('tasks')
    .values({
      tenant_id: values.tenantId,
      project_id: values.projectId,
      type: values.type,
      title: values.title,
      description: values.description,
      status: values.status,
      priority: values.priority,
      assignee_type: values.assigneeType,
      assignee_id: values.assigneeId,
      actions: JSON.stringify(values.actions),
      targets: JSON.stringify(values.targets),
      due_date: values.dueDate,
      created_by: values.createdBy,
      ...(values.origin !== undefined ? { origin: values.origin } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertDependencies(db: Kysely<Database>, tenantId: string, taskId: string, dependsOn: string[]): Promise<void> {
  if (dependsOn.length === 0) return;
  await db.insertInto('task_dependencies').values(dependsOn.map((id) => ({ tenant_id: tenantId, task_id: taskId, depends_on: id }))).execute();
}

/** The project's tasks among `ids`, key-share locked so none is deleted while a task comes to depend on it. */
export async function findProjectTasks(db: Kysely<Database>, tenantId: string, projectId: string, ids: string[]): Promise<TaskRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('tasks').selectAll().where('tenant_id', '=', tenantId).where('project_id', '=', projectId).where('id', 'in', ids).forKeyShare().execute();
}

export async function findTask(db: Kysely<Database>, tenantId: string, taskId: string, lock?: 'update'): Promise<TaskRow | undefined> {
  let query = db.selectFrom('tasks').selectAll().where('tenant_id', '=', tenantId).where('id', '=', taskId);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Each task's dependencies, by task id, in the order they were named. */
export async function dependenciesOf(db: Kysely<Database>, tenantId: string, taskIds: string[]): Promise<Map<string, string[]>> {
  const byTask = new Map<string, string[]>(taskIds.map((id) => [id, []]));
  if (taskIds.length === 0) return byTask;
  const rows = await db.selectFrom('task_dependencies').select(['task_id', 'depends_on']).where('tenant_id', '=', tenantId).where('task_id', 'in', taskIds).orderBy('depends_on').execute();
  for (const row of rows) byTask.get(row.task_id)?.push(row.depends_on);
  return byTask;
}

/** The dependencies of a task that are not completed. */
export async function openDependencies(db: Kysely<Database>, tenantId: string, taskId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('task_dependencies as d')
    .innerJoin('tasks as t', (join) => join.onRef('t.id', '=', 'd.depends_on').onRef('t.tenant_id', '=', 'd.tenant_id'))
    .select('t.id')
    .where('d.tenant_id', '=', tenantId)
    .where('d.task_id', '=', taskId)
    .where('t.status', '<>', 'completed')
    .orderBy('t.id')
    .execute();
  return rows.map((row) => row.id);
}

/** The project's tasks whose origin starts with `prefix` (those one flow answer made), locked to be brought in line with it. */
export async function tasksOfOrigin(db: Kysely<Database>, tenantId: string, projectId: string, prefix: string): Promise<TaskRow[]> {
  return db
    .selectFrom('tasks')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('project_id', '=', projectId)
    .where(sql<boolean>`starts_with(origin, ${prefix})`)
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Those of `taskIds` another task still waits for (one neither completed nor cancelled depends on it). */
export async function tasksWaitedFor(db: Kysely<Database>, tenantId: string, taskIds: string[]): Promise<string[]> {
  if (taskIds.length === 0) return [];
  const rows = await db
    .selectFrom('task_dependencies as d')
    .innerJoin('tasks as t', (join) => join.onRef('t.id', '=', 'd.task_id').onRef('t.tenant_id', '=', 'd.tenant_id'))
    .select('d.depends_on')
    .distinct()
    .where('d.tenant_id', '=', tenantId)
    .where('d.depends_on', 'in', taskIds)
    .where('t.status', 'not in', ['completed', 'cancelled'])
    .execute();
  return rows.map((row) => row.depends_on);
}

/** Sets the status of tasks that are not completed (a completed task stays completed). */
export async function setOpenTasksStatus(db: Kysely<Database>, tenantId: string, taskIds: string[], status: 'pending' | 'cancelled'): Promise<void> {
  if (taskIds.length === 0) return;
  await db.updateTable('tasks').set({ status, updated_at: databaseNow }).where('tenant_id', '=', tenantId).where('id', 'in', taskIds).where('status', '<>', 'completed').execute();
}

export async function completeTask(db: Kysely<Database>, tenantId: string, taskId: string): Promise<void> {
  await db.updateTable('tasks').set({ status: 'completed', completed_at: databaseNow, updated_at: databaseNow }).where('tenant_id', '=', tenantId).where('id', '=', taskId).execute();
}

/** Blocked tasks that depended on `taskId` and now have every dependency completed become pending. */
export async function unblockDependents(db: Kysely<Database>, tenantId: string, taskId: string): Promise<void> {
  await db
    .updateTable('tasks as t')
    .set({ status: 'pending', updated_at: databaseNow })
    .where('t.tenant_id', '=', tenantId)
    .where('t.status', '=', 'blocked')
    .where('t.id', 'in', (eb) => eb.selectFrom('task_dependencies').select('task_id').where('tenant_id', '=', tenantId).where('depends_on', '=', taskId))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('task_dependencies as d')
            .innerJoin('tasks as o', (join) => join.onRef('o.id', '=', 'd.depends_on').onRef('o.tenant_id', '=', 'd.tenant_id'))
            .select('d.task_id')
            .whereRef('d.task_id', '=', 't.id')
            .where('o.status', '<>', 'completed'),
        ),
      ),
    )
    .execute();
}

export async function listTasks(
  db: Kysely<Database>,
  tenantId: string,
  filter: Paging & { projectId: string; status?: TaskStatus | undefined; assigneeType?: 'user' | 'agent' | undefined; type?: TaskType | undefined },
) {
  let query = db.selectFrom('tasks').where('tenant_id', '=', tenantId).where('project_id', '=', filter.projectId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.assigneeType) query = query.where('assignee_type', '=', filter.assigneeType);
  if (filter.type) query = query.where('type', '=', filter.type);
  return pagedRows(query.selectAll().orderBy('created_at').orderBy('id'), query, filter);
}

/** Tasks assigned to the user in the projects the scope sees, with their project's name; and counts by status. */
export async function listUserTasks(db: Kysely<Database>, scope: ProjectScope & { userId: string }, page: Paging) {
  const assigned = db
    .selectFrom('tasks as t')
    .innerJoin('projects as p', (join) => join.onRef('p.id', '=', 't.project_id').onRef('p.tenant_id', '=', 't.tenant_id'))
    .where('t.tenant_id', '=', scope.tenantId)
    .where('t.assignee_type', '=', 'user')
    .where('t.assignee_id', '=', scope.userId)
    .where('t.project_id', 'in', projectIdsInScope(db, scope));
  const [rows, counts] = await Promise.all([
    assigned
      .select(['t.id', 't.project_id', 'p.name as project_name', 't.type', 't.title', 't.status', 't.priority', 't.due_date'])
      .orderBy('t.created_at')
      .orderBy('t.id')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    assigned.select(['t.status', (eb) => eb.fn.countAll<number>().as('count')]).groupBy('t.status').execute(),
  ]);
  const count = (status: TaskStatus) => Number(counts.find((row) => row.status === status)?.count ?? 0);
  return { rows, counts: { pending: count('pending') + count('blocked'), inProgress: count('in_progress'), completed: count('completed') }, total: counts.reduce((sum, row) => sum + Number(row.count), 0) };
}

/**
 * Takes the tenant's idempotency key for this transaction, or answers false when another
 * transaction holds it (a submission with that key still in progress).
 */
export async function tryHoldIdempotencyKey(db: Kysely<Database>, tenantId: string, key: string): Promise<boolean> {
  const { rows } = await sql<{ held: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${`task-submission:${tenantId}:${key}`}, 0)) as held`.execute(db);
  return rows[0]!.held;
}

export async function findSubmission(db: Kysely<Database>, tenantId: string, key: string): Promise<TaskSubmissionRow | undefined> {
  return db.selectFrom('task_submissions').selectAll().where('tenant_id', '=', tenantId).where('idempotency_key', '=', key).executeTakeFirst();
}

export async function insertSubmission(
  db: Kysely<Database>,
  values: { tenantId: string; taskId: string; actionId: string; key: string; requestHash: string; response: (submissionId: string) => Record<string, unknown>; submittedBy: string | null },
): Promise<Record<string, unknown>> {
  const id = randomUUID();
  const response = values.response(id);
  await db
    .insertInto('task_submissions')
    .values({ id, tenant_id: values.tenantId, task_id: values.taskId, action_id: values.actionId, idempotency_key: values.key, request_hash: values.requestHash, response: JSON.stringify(response), submitted_by: values.submittedBy })
    .execute();
  return response;
}

/** Deletes the project's tasks with their dependencies and submissions; answers how many of each went. */
export async function deleteTasksOfProject(db: Kysely<Database>, tenantId: string, projectId: string) {
  const ofProject = db.selectFrom('tasks').select('id').where('tenant_id', '=', tenantId).where('project_id', '=', projectId);
  const submissions = await db.deleteFrom('task_submissions').where('tenant_id', '=', tenantId).where('task_id', 'in', ofProject).executeTakeFirst();
  const dependencies = await db.deleteFrom('task_dependencies').where('tenant_id', '=', tenantId).where('task_id', 'in', ofProject).executeTakeFirst();
  const tasks = await db.deleteFrom('tasks').where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirst();
  return { tasks: Number(tasks.numDeletedRows), dependencies: Number(dependencies.numDeletedRows), submissions: Number(submissions.numDeletedRows) };
}

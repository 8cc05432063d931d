import type { CompiledQuery, Kysely, SelectQueryBuilder } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database, ProjectRow, ProjectStatus } from '../../db/database.ts';
import { pagedRows } from '../../db/paged-rows.ts';
import { lockMembershipForShare } from '../agency-projects/agency-projects.repository.ts';
import type { Paging } from '../../http/paging.ts';

/** The tenant, and (unless unrestricted) the user whose organizations and assignments bound it. */
export type ProjectScope = { tenantId: string; userId?: string };

function scoped<O>(query: SelectQueryBuilder<Database, 'projects', O>, scope: ProjectScope) {
  const scopedQuery = query.where('projects.tenant_id', '=', scope.tenantId);
  const userId = scope.userId;
  if (!userId) return scopedQuery;
  return scopedQuery.where(({ or, exists, selectFrom }) =>
    or([
      exists(
        selectFrom('organization_members as m')
          .select('m.id')
          .whereRef('m.organization_id', '=', 'projects.organization_id')
          .where('m.user_id', '=', userId)
          .where('m.role', 'in', ['owner', 'admin', 'member']),
      ),
      exists(
        selectFrom('agency_project_assignments as a')
          .select('a.id')
          .whereRef('a.project_id', '=', 'projects.id')
          .where('a.customer_user_id', '=', userId),
      ),
    ]),
  );
}

/** The ids of the projects the scope sees, as a subquery (`where project_id in …`). */
export function projectIdsInScope(db: Kysely<Database>, scope: ProjectScope) {
  return scoped(db.selectFrom('projects'), scope).select('projects.id');
}

/** The orders a list of projects can be read in; each breaks ties by id, in the same direction. */
export type ProjectOrder = { column: 'created_at' | 'updated_at' | 'name'; direction: 'asc' | 'desc' };

export async function listProjects(db: Kysely<Database>, scope: ProjectScope, filter: Paging & { status?: ProjectStatus | undefined; order?: ProjectOrder }) {
  let query = scoped(db.selectFrom('projects'), scope);
  if (filter.status) query = query.where('projects.status', '=', filter.status);
  const { column, direction } = filter.order ?? { column: 'created_at', direction: 'asc' };
  return pagedRows(query.selectAll('projects').orderBy(`projects.${column}`, direction).orderBy('projects.id', direction), query, filter);
}

/**
 * The project, if the scope sees it. `lock`: `update` to change or delete it; `keyShare` for a row
 * about to reference it (what that row's foreign key would take anyway, only earlier), so a delete
 * in flight is waited for and then reads as not found, instead of failing the insert.
 */
export async function findProject(db: Kysely<Database>, scope: ProjectScope, projectId: string, options: { lock?: 'update' | 'keyShare' } = {}): Promise<ProjectRow | undefined> {
  const statement = findProjectStatement(db, Boolean(scope.userId), options.lock);
  const values: Record<symbol, unknown> = { [TENANT]: scope.tenantId, [USER]: scope.userId, [PROJECT]: projectId };
  const parameters = statement.parameters.map((value) => (typeof value === 'symbol' ? values[value] : value));
  const { rows } = await db.executeQuery<ProjectRow>({ ...statement, parameters });
  return rows[0];
}

// The statement findProject sends depends only on whether a user bounds the scope and on the lock,
// so each of those few shapes is built and compiled once (it is read on nearly every request), with
// markers where the values go; each call puts its own values in their places.
const TENANT = Symbol('tenantId');
const USER = Symbol('userId');
const PROJECT = Symbol('projectId');
const findProjectStatements = new Map<string, CompiledQuery<ProjectRow>>();

function findProjectStatement(db: Kysely<Database>, userBound: boolean, lock: 'update' | 'keyShare' | undefined): CompiledQuery<ProjectRow> {
  const shape = `${userBound}:${lock}`;
  let statement = findProjectStatements.get(shape);
  if (statement === undefined) {
    const markers = { tenantId: TENANT, ...(userBound ? { userId: USER } : {}) } as unknown as ProjectScope;
    let query = scoped(db.selectFrom('projects'), markers).selectAll('projects').where('projects.id', '=', PROJECT as unknown as string);
    if (lock === 'update') query = query.forUpdate();
    if (lock === 'keyShare') query = query.forKeyShare();
    statement = query.compile();
    findProjectStatements.set(shape, statement);
  }
  return statement;
}

export async function insertProject(
  db: Kysely<Database>,
  values: { id?: string | undefined; tenantId: string; organizationId: string | null; name: string; description: string | null; template: string | null; metadata: Record<string, unknown>; createdBy: string },
): Promise<ProjectRow> {
  return db
    .insertInto('projects')
    .values({
      ...(values.id !== undefined ? { id: values.id } : {}),
      tenant_id: values.tenantId,
      organization_id: values.organizationId,
      name: values.name,
      description: values.description,
      template: values.template,
      metadata: JSON.stringify(values.metadata),
      created_by: values.createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateProject(
  db: Kysely<Database>,
  tenantId: string,
  projectId: string,
  changes: { name?: string; description?: string | null; metadata?: Record<string, unknown>; status?: ProjectStatus },
): Promise<ProjectRow> {
  return db
    .updateTable('projects')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.metadata !== undefined ? { metadata: JSON.stringify(changes.metadata) } : {}),
      ...(changes.status !== undefined ? { status: changes.status } : {}),
      updated_at: databaseNow,
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', projectId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Share-locks what lets the user reach the project, read afresh: their membership of its
 * organization as an owner, admin or member, else their assignment to it as a customer; answers
 * whether either is there. Removing the member, changing their role or removing the assignment
 * waits for the caller's transaction, and one made before it is waited for and then seen: a write
 * never lands for a caller whose access was taken away before it did.
 */
export async function lockAccessToProject(db: Kysely<Database>, tenantId: string, project: Pick<ProjectRow, 'id' | 'organization_id'>, userId: string): Promise<boolean> {
  if (project.organization_id) {
    const membership = await lockMembershipForShare(db, tenantId, project.organization_id, userId);
    if (membership && membership.role !== 'customer') return true;
  }
  const assignment = await db
    .selectFrom('agency_project_assignments')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('project_id', '=', project.id)
    .where('customer_user_id', '=', userId)
    .forShare()
    .executeTakeFirst();
  return assignment !== undefined;
}

/** Deletes the rows of `table` that belong to the project; returns how many went. */
export async function deleteProjectRows(
  db: Kysely<Database>,
  table: 'kit_credentials' | 'agency_project_assignments',
  tenantId: string,
  projectId: string,
): Promise<number> {
  const result = await db.deleteFrom(table).where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Locks the project's kit executions for the rest of the transaction. A worker storing a run's
 * outputs holds its execution (the outputs' foreign key), so this waits for that store to commit,
 * and the outputs deleted next are all there are: none is left for the execution's cascade to
 * remove uncounted. A store that comes later waits for this delete and finds its execution gone.
 */
export async function lockKitExecutionsOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<void> {
  await db.selectFrom('kit_executions').select('id').where('tenant_id', '=', tenantId).where('project_id', '=', projectId).forUpdate().execute();
}

/** Deletes the outputs of the project's kit executions; returns how many went. */
export async function deleteKitOutputsOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<number> {
  const result = await db
    .deleteFrom('kit_outputs')
    .where('tenant_id', '=', tenantId)
    .where('execution_id', 'in', db.selectFrom('kit_executions').select('id').where('tenant_id', '=', tenantId).where('project_id', '=', projectId))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Deletes the project's kit executions and returns the bundle blobs they held (read from the rows
 * as deleted, so a bundle attached while this waited for the row is not missed).
 */
export async function deleteKitExecutionsOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<{ count: number; bundleBlobIds: string[] }> {
  const rows = await db
    .deleteFrom('kit_executions')
    .where('tenant_id', '=', tenantId)
    .where('project_id', '=', projectId)
    .returning('bundle_blob_id')
    .execute();
  return { count: rows.length, bundleBlobIds: rows.flatMap((row) => (row.bundle_blob_id ? [row.bundle_blob_id] : [])) };
}

export async function deleteProjectRow(db: Kysely<Database>, tenantId: string, projectId: string): Promise<number> {
  const result = await db.deleteFrom('projects').where('tenant_id', '=', tenantId).where('id', '=', projectId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

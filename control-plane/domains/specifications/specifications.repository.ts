import { sql, type Kysely } from 'kysely';
import { databaseNow } from '../../db/database-clock.ts';
import type { Database, SpecificationRow } from '../../db/database.ts';

/** The project's next specification version: one more than its last (the caller holds the project locked). */
export async function nextSpecificationVersion(db: Kysely<Database>, tenantId: string, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('specifications')
    .select((eb) => eb.fn.max('version').as('last'))
    .where('tenant_id', '=', tenantId)
    .where('project_id', '=', projectId)
    .executeTakeFirst();
  return Number(row?.last ?? 0) + 1;
}

export async function insertSpecification(
  db: Kysely<Database>,
  values: { tenantId: string; projectId: string; version: number; options: Record<string, unknown>; input: Record<string, unknown>; createdBy: string | null },
): Promise<SpecificationRow> {
  return db
    .insertInto('specifications')
    .values({
      tenant_id: values.tenantId,
      project_id: values.projectId,
      version: values.version,
      options: JSON.stringify(values.options),
      input: JSON.stringify(values.input),
      created_by: values.createdBy,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSpecification(db: Kysely<Database>, tenantId: string, specificationId: string): Promise<SpecificationRow | undefined> {
  return db.selectFrom('specifications').selectAll().where('tenant_id', '=', tenantId).where('id', '=', specificationId).executeTakeFirst();
}

/** The project's latest completed specification (the highest version), or undefined when none has completed. */
export async function findLatestCompletedSpecification(db: Kysely<Database>, tenantId: string, projectId: string): Promise<SpecificationRow | undefined> {
  return db
    .selectFrom('specifications')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('project_id', '=', projectId)
    .where('status', '=', 'completed')
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The worker's claim on a specification still compiling, held to the end of its transaction; undefined when there is none. */
export async function claimCompilingSpecification(db: Kysely<Database>, tenantId: string, specificationId: string): Promise<SpecificationRow | undefined> {
  return db
    .selectFrom('specifications')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', specificationId)
    .where('status', '=', 'compiling')
    .forUpdate()
    .executeTakeFirst();
}

export async function completeSpecification(db: Kysely<Database>, specificationId: string, outcome: { spec: unknown; validation: unknown }): Promise<void> {
  await db
    .updateTable('specifications')
    .set({ status: 'completed', spec: JSON.stringify(outcome.spec), validation: JSON.stringify(outcome.validation), compiled_at: databaseNow })
    .where('id', '=', specificationId)
    .where('status', '=', 'compiling')
    .execute();
}

export async function failSpecification(db: Kysely<Database>, specificationId: string, message: string): Promise<void> {
  await db.updateTable('specifications').set({ status: 'failed', error_message: message }).where('id', '=', specificationId).where('status', '=', 'compiling').execute();
}

/**
 * Marks failed every specification compiling for over `minutes` whose compile job can no longer
 * run: gone, or out of attempts and not held by a worker lately (a compile holds it for
 * milliseconds). Answers how many.
 */
export async function failStrandedSpecifications(db: Kysely<Database>, minutes: number): Promise<number> {
  const result = await db
    .updateTable('specifications as s')
    .set({ status: 'failed', error_message: 'The compile was interrupted; compile the project again' })
    .where('s.status', '=', 'compiling')
    .where('s.created_at', '<', sql<Date>`now() - make_interval(mins => ${minutes})`)
    .where(({ not, exists }) =>
      not(
        exists(
          sql`(select 1 from graphile_worker.jobs j
                where j.key = 'specification:' || s.id::text
                  and (j.attempts < j.max_attempts or j.locked_at > now() - make_interval(mins => ${minutes})))`,
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deletes the project's specifications; returns how many went. */
export async function deleteSpecificationsOfProject(db: Kysely<Database>, tenantId: string, projectId: string): Promise<number> {
  const result = await db.deleteFrom('specifications').where('tenant_id', '=', tenantId).where('project_id', '=', projectId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

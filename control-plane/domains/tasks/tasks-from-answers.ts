import type { Kysely } from 'kysely';
import type { Database, ProjectRow, TaskType } from '../../db/database.ts';
import type { TaskFromAnswer } from '../flow/flow-tasks.ts';
import { insertTask, setOpenTasksStatus, tasksOfOrigin, tasksWaitedFor } from './tasks.repository.ts';

/** A task an answer made, as the answer's `effects.tasksCreated` lists it. */
export type CreatedTask = { taskId: string; type: TaskType; title: string };

/**
 * Brings the project's tasks of one answer (their origins start with `prefix`) in line with the
 * tasks the answer now asks for, in the answer's transaction: one it asks for and the project lacks
 * is made (pending, unassigned); one it no longer asks for is cancelled unless already completed
 * or another open task depends on it (a cancelled task never completes: that one would stay
 * blocked for ever); a cancelled one it asks for again is pending again. Answering the same again changes nothing.
 * Answers the tasks made.
 */
export async function alignTasksWithAnswer(db: Kysely<Database>, project: ProjectRow, prefix: string, wanted: TaskFromAnswer[], createdBy: string | null): Promise<CreatedTask[]> {
  const existing = await tasksOfOrigin(db, project.tenant_id, project.id, prefix);
  const wantedOrigins = new Set(wanted.map((task) => task.origin));
  const existingOrigins = new Set(existing.map((task) => task.origin));
  const unwanted = existing.filter((task) => !wantedOrigins.has(task.origin!) && task.status !== 'cancelled' && task.status !== 'completed').map((task) => task.id);
  const waitedFor = new Set(await tasksWaitedFor(db, project.tenant_id, unwanted));
  await setOpenTasksStatus(db, project.tenant_id, unwanted.filter((id) => !waitedFor.has(id)), 'cancelled');
  await setOpenTasksStatus(db, project.tenant_id, existing.filter((task) => wantedOrigins.has(task.origin!) && task.status === 'cancelled').map((task) => task.id), 'pending');
  const created: CreatedTask[] = [];
  for (const task of wanted) {
    if (existingOrigins.has(task.origin)) continue;
    const row = await insertTask(db, {
      tenantId: project.tenant_id,
      projectId: project.id,
      type: task.type,
      title: task.title,
      description: task.description,
      status: 'pending',
      priority: task.priority,
      assigneeType: null,
      assigneeId: null,
      actions: task.actions,
      targets: [{ type: 'project', id: project.id }],
      dueDate: null,
      createdBy,
      origin: task.origin,
    });
    created.push({ taskId: row.id, type: row.type, title: row.title });
  }
  return created;
}

import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { stringify as stableJson } from 'safe-stable-stringify';
import type { Principal } from '../../auth/principal.ts';
import type { Database, ProjectRow, TaskAction, TaskRow } from '../../db/database.ts';
import { AppError, conflict, forbidden, invalid, notFound } from '../../errors/app-error.ts';
import { quotedId } from '../../errors/quoted-input.ts';
import { agentNames, SUPERVISOR } from '../agents/agent-roster.ts';
import { holdsOrganizationRole } from '../organizations/organization-access.ts';
import { requireProjectMember } from '../projects/project-member.ts';
import { projectScopeFor } from '../projects/project-scope.ts';
import { requireProjectForCaller } from '../projects/project-for-caller.ts';
import { findProject, lockAccessToProject } from '../projects/projects.repository.ts';
import { answerAction } from './task-actions.ts';
import type { CreateTaskInput, ListTasksInput, SubmitActionInput, SubmitActionOutput, TaskOutput } from './tasks.schema.ts';
import {
  completeTask,
  dependenciesOf,
  findProjectTasks,
  findSubmission,
  findTask,
  insertDependencies,
  insertSubmission,
  insertTask,
  listTasks,
  listUserTasks,
  openDependencies,
  tryHoldIdempotencyKey,
  unblockDependents,
} from './tasks.repository.ts';

function taskToOutput(row: TaskRow, dependencies: string[]): TaskOutput {
  return {
    id: row.id,
    projectId: row.project_id,
    type: row.type,
    title: row.title,
    description: row.description,
    status: row.status,
    priority: row.priority,
    assigneeType: row.assignee_type,
    assigneeId: row.assignee_id,
    actions: row.actions,
    targets: row.targets,
    dependencies,
    dueDate: row.due_date?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

/** A user assignee must be someone who sees the project; an agent assignee, one the service knows. */
async function requireAssignee(db: Kysely<Database>, project: ProjectRow, input: CreateTaskInput): Promise<{ type: 'user' | 'agent'; id: string } | null> {
  if ((input.assigneeType === undefined) !== (input.assigneeId === undefined)) {
    throw invalid('assigneeType and assigneeId go together', { issues: [{ field: input.assigneeType ? 'assigneeId' : 'assigneeType', issue: 'is required with the other' }] });
  }
  if (!input.assigneeType || !input.assigneeId) return null;
  if (input.assigneeType === 'agent') {
    const agents: string[] = [...agentNames, SUPERVISOR];
    if (!agents.includes(input.assigneeId)) throw invalid(`No agent is called ${quotedId(input.assigneeId)}`, { issues: [{ field: 'assigneeId', issue: `must be one of ${agents.join(', ')}` }] });
    return { type: 'agent', id: input.assigneeId };
  }
  const userId = input.assigneeId.toLowerCase();
  const sees = /^[0-9a-f-]{36}$/.test(userId) && (await findProject(db, { tenantId: project.tenant_id, userId }, project.id, { lock: 'keyShare' })) !== undefined;
  if (!sees || !(await lockAccessToProject(db, project.tenant_id, project, userId))) {
    throw invalid(`User ${quotedId(input.assigneeId)} does not see this project`, { issues: [{ field: 'assigneeId', issue: 'must be a user who sees the project (a member of its organization, or its assigned customer)' }] });
  }
  return { type: 'user', id: userId };
}

/**
 * A task of the project, for its members and above (a customer is FORBIDDEN). Its dependencies
 * must be tasks of the same project; it starts blocked while one of them is not completed.
 */
export async function createTask(db: Kysely<Database>, principal: Principal, input: CreateTaskInput): Promise<TaskOutput> {
  const project = await requireProjectForCaller(db, principal, input.projectId, { lock: 'update' });
  await requireProjectMember(db, principal, project, 'creates its tasks');
  const assignee = await requireAssignee(db, project, input);
  const dependencies = input.dependencies ?? [];
  const found = await findProjectTasks(db, project.tenant_id, project.id, dependencies);
  const unknown = dependencies.find((id) => !found.some((task) => task.id === id));
  if (unknown) throw invalid(`Task ${quotedId(unknown)} is not a task of this project`, { issues: [{ field: `dependencies.${dependencies.indexOf(unknown)}`, issue: 'must be a task of the same project' }] });
  // A cancelled task never completes: a task waiting for it would stay blocked for good.
  const cancelled = dependencies.find((id) => found.some((task) => task.id === id && task.status === 'cancelled'));
  if (cancelled) throw invalid(`Task ${quotedId(cancelled)} is cancelled: nothing can wait for it`, { issues: [{ field: `dependencies.${dependencies.indexOf(cancelled)}`, issue: 'must not be a cancelled task' }] });
  const actions: TaskAction[] = input.actions.map((action, index) => ({ id: `a${index + 1}`, type: action.type, label: action.label, config: action.config }));
  const task = await insertTask(db, {
    tenantId: project.tenant_id,
    projectId: project.id,
    type: input.type,
    title: input.title,
    description: input.description,
    status: found.some((task) => task.status !== 'completed') ? 'blocked' : 'pending',
    priority: input.priority ?? 'medium',
    assigneeType: assignee?.type ?? null,
    assigneeId: assignee?.id ?? null,
    actions,
    targets: input.targets ?? [],
    dueDate: input.dueDate ?? null,
    createdBy: principal.tenantId === principal.homeTenantId ? principal.userId : null,
  });
  await insertDependencies(db, project.tenant_id, task.id, dependencies);
  return taskToOutput(task, [...dependencies].sort());
}

/** The project's tasks, oldest first, to whoever sees the project. */
export async function listProjectTasks(db: Kysely<Database>, principal: Principal, input: ListTasksInput) {
  const project = await requireProjectForCaller(db, principal, input.projectId);
  const page = await listTasks(db, project.tenant_id, input);
  const dependencies = await dependenciesOf(db, project.tenant_id, page.rows.map((row) => row.id));
  return { tasks: page.rows.map((row) => taskToOutput(row, dependencies.get(row.id) ?? [])), total: page.total, limit: page.limit, offset: page.offset };
}

/** The caller's own tasks across the projects they see. */
export async function listTasksOfCaller(db: Kysely<Database>, principal: Principal, page: { limit: number; offset: number }) {
  const { rows, counts, total } = await listUserTasks(db, { tenantId: principal.tenantId, userId: principal.userId }, page);
  return {
    tasks: rows.map((row) => ({ id: row.id, projectId: row.project_id, projectName: row.project_name, type: row.type, title: row.title, status: row.status, priority: row.priority, dueDate: row.due_date?.toISOString() ?? null })),
    counts,
    total,
    limit: page.limit,
    offset: page.offset,
  };
}

/**
 * Submits an action of a task: idempotent on the key (the IETF idempotency-key draft, DESIGN
 * §5.6) — the same key and body answer the stored response, another body is 422, a submission with
 * the key still in progress is 409. A customer submits only tasks assigned to them; a task that is
 * blocked, completed or cancelled takes no action (CONFLICT). The action completes the task, and
 * tasks that waited only for it become pending.
 */
export async function submitAction(db: Kysely<Database>, principal: Principal, input: SubmitActionInput): Promise<SubmitActionOutput> {
  // Who may submit comes first, the key after: a key answers its stored response (or 422, or 409)
  // only to a caller who may submit the task now, never to one who lost access or never had it.
  const found = await findTask(db, principal.tenantId, input.taskId);
  if (!found) throw notFound('The task');
  const project = await requireProjectForCaller(db, principal, found.project_id, { lock: 'keyShare', unseen: 'The task' });
  // Whoever sees the project and is not its member, admin or owner is its assigned customer.
  const assignedToCaller = found.assignee_type === 'user' && found.assignee_id === principal.userId;
  if (!assignedToCaller && !(await submitsAnyTask(db, principal, project))) throw forbidden('A customer submits only the tasks assigned to them');
  const key = input.idempotencyKey ?? randomUUID();
  // The caller is part of the request's fingerprint: keys are unique within the tenant, and one that
  // another user of the tenant chose answers IDEMPOTENCY_MISMATCH, never that user's response.
  const fingerprint = { submittedBy: principal.userId, taskId: input.taskId, actionId: input.actionId, data: input.data ?? null };
  const requestHash = createHash('sha256').update(stableJson(fingerprint) ?? '').digest('hex');
  if (!(await tryHoldIdempotencyKey(db, principal.tenantId, key))) throw conflict('A submission with this idempotency key is still in progress; retry once it has answered');
  const earlier = await findSubmission(db, principal.tenantId, key);
  if (earlier) {
    if (earlier.request_hash !== requestHash) throw new AppError('IDEMPOTENCY_MISMATCH', 'This idempotency key was used for another submission: use a new key for a new one');
    return earlier.response as SubmitActionOutput;
  }
  const task = (await findTask(db, principal.tenantId, input.taskId, 'update'))!;
  const action = task.actions.find((candidate) => candidate.id === input.actionId);
  if (!action) throw notFound(`Action ${quotedId(input.actionId)} of this task`);
  if (task.status === 'blocked') throw conflict(`The task waits for ${(await openDependencies(db, task.tenant_id, task.id)).join(', ')} to complete`);
  if (task.status === 'completed' || task.status === 'cancelled') throw conflict(`The task is ${task.status}`);
  const outcome = answerAction(action, input.data);
  await completeTask(db, task.tenant_id, task.id);
  await unblockDependents(db, task.tenant_id, task.id);
  const response = await insertSubmission(db, {
    tenantId: task.tenant_id,
    taskId: task.id,
    actionId: action.id,
    key,
    requestHash,
    submittedBy: principal.tenantId === principal.homeTenantId ? principal.userId : null,
    response: (submissionId) => ({ submissionId, taskId: task.id, actionId: action.id, result: outcome.result, effects: { taskCompleted: true, outputBindings: outcome.outputBindings, workflowsTriggered: [] } }),
  });
  return response as SubmitActionOutput;
}

/** Whether the caller may submit any task of the project: a member, admin or owner of its organization, or a platform admin acting in the tenant. */
async function submitsAnyTask(db: Kysely<Database>, principal: Principal, project: ProjectRow): Promise<boolean> {
  if (!projectScopeFor(principal).userId) return true;
  return project.organization_id !== null && (await holdsOrganizationRole(db, principal, project.organization_id, 'member'));
}

import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, ProjectRow } from '../../db/database.ts';
import { AppError, conflict, forbidden } from '../../errors/app-error.ts';
import { defaultOrganizationOfUser } from '../organizations/organizations.repository.ts';
import { pagingOf, type BasicListQuery } from '../../basic/basic-paging.ts';
import { startFlow, transitionFlow } from '../flow/flow.service.ts';
import { flowPhases, phaseAfter, type FlowPhase } from '../flow/flow-phases.ts';
import { basicStatusOf, firstPhaseOfGroup } from './basic-project-status.ts';
import { requireProjectMember } from './project-member.ts';
import { requireProjectForCaller } from './project-for-caller.ts';
import { projectScopeFor } from './project-scope.ts';
import { listProjects, updateProject } from './projects.repository.ts';
import type { BasicProject, BasicProjectInput, BasicProjectPatch, BasicProjectStatus } from './projects.basic-schema.ts';
import { createProjectForCaller, deleteProjectForCaller } from './projects.service.ts';

/** Variant A's projects (seed §2.1, §4.2; DESIGN §5.2): Variant B's projects, seen as plain resources. */

const sortColumns = { createdAt: 'created_at', updatedAt: 'updated_at', name: 'name' } as const;

export function toBasicProject(row: ProjectRow): BasicProject {
  return {
    id: row.id,
    name: row.name,
    ...(row.description === null ? {} : { description: row.description }),
    status: basicStatusOf(row),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export async function listBasicProjects(db: Kysely<Database>, principal: Principal, query: BasicListQuery<keyof typeof sortColumns>) {
  const { rows, total } = await listProjects(db, projectScopeFor(principal), { ...pagingOf(query), order: { column: sortColumns[query.sort], direction: query.order } });
  return { items: rows.map(toBasicProject), total, page: query.page, pageSize: query.pageSize };
}

export async function getBasicProject(db: Kysely<Database>, principal: Principal, id: string): Promise<BasicProject> {
  return toBasicProject(await requireProjectForCaller(db, principal, id));
}

/** A project made as Variant B's POST makes one (in the caller's organization), then moved to the status asked for. */
export async function createBasicProject(db: Kysely<Database>, principal: Principal, input: BasicProjectInput): Promise<BasicProject> {
  // A's input names no organization: a caller without one of their own (a customer, a user in none)
  // cannot create here, which is FORBIDDEN — not B's "organizationId is required", a field A refuses.
  const organizationId = principal.tenantId === principal.homeTenantId ? await defaultOrganizationOfUser(db, principal.tenantId, principal.userId) : undefined;
  if (principal.tenantId === principal.homeTenantId && !organizationId) {
    throw forbidden('A project is created by an owner, admin or member of an organization, and you are none of these');
  }
  const created = await createProjectForCaller(db, principal, { name: input.name, description: input.description ?? null, ...(organizationId ? { organizationId } : {}) }, { id: input.id });
  if (input.status !== undefined && input.status !== 'draft') await moveToStatus(db, principal, created.id, input.status);
  return getBasicProject(db, principal, created.id);
}

/** PUT: name and description replaced (a description left out is none); a status sent moves the flow, one left out stays. */
export async function replaceBasicProject(db: Kysely<Database>, principal: Principal, input: BasicProjectInput & { id: string }): Promise<BasicProject> {
  return changeBasicProject(db, principal, { ...input, description: input.description ?? null });
}

/** PATCH: only the fields sent; none changes nothing, updatedAt included. */
export async function patchBasicProject(db: Kysely<Database>, principal: Principal, input: BasicProjectPatch): Promise<BasicProject> {
  return changeBasicProject(db, principal, input);
}

async function changeBasicProject(db: Kysely<Database>, principal: Principal, input: BasicProjectPatch): Promise<BasicProject> {
  const project = await requireProjectForCaller(db, principal, input.id, { lock: 'update' });
  const changes = {
    ...(input.name !== undefined && input.name !== project.name ? { name: input.name } : {}),
    ...(input.description !== undefined && input.description !== project.description ? { description: input.description } : {}),
  };
  const changed = Object.keys(changes).length > 0 ? await updateProject(db, principal.tenantId, project.id, changes) : project;
  if (input.status === undefined) return toBasicProject(changed);
  await moveToStatus(db, principal, project.id, input.status);
  return getBasicProject(db, principal, project.id);
}

export async function deleteBasicProject(db: Kysely<Database>, principal: Principal, id: string): Promise<void> {
  await deleteProjectForCaller(db, principal, id);
}

const phaseIndex = (phase: ProjectRow['phase']) => (phase === 'CREATED' ? -1 : flowPhases.indexOf(phase));

/**
 * Writing a status moves the project's flow to the first phase of the group it names (DESIGN
 * §5.2), one transition at a time by the flow's own rules — who may move it, the readiness of each
 * phase left, the questions each phase entered puts — as POST /flow/start and /flow/transition
 * would, never forced. The status it already has changes nothing. A phase never moves back (a
 * flow's answers belong to the phases they were given in), and complete is written from
 * specification; writing specification to a complete project opens it again.
 */
async function moveToStatus(db: Kysely<Database>, principal: Principal, projectId: string, status: BasicProjectStatus): Promise<void> {
  let project = await requireProjectForCaller(db, principal, projectId, { lock: 'update' });
  const current = basicStatusOf(project);
  if (status === current) return;
  await requireProjectMember(db, principal, project, 'changes its status');
  if (project.status === 'archived') throw conflict('The project is archived; set its status to active (PATCH /api/projects/{projectId}) before moving it');
  if (status === 'complete') {
    if (project.phase !== 'SPECIFICATION') throw phaseInvalid(project, 'complete is written from specification');
    await updateProject(db, principal.tenantId, project.id, { status: 'completed' });
    return;
  }
  const target = firstPhaseOfGroup[status];
  if (phaseIndex(target) < phaseIndex(project.phase)) throw phaseInvalid(project, `a phase never moves back, and ${status} begins at ${target}`);
  if (project.status === 'completed') project = await updateProject(db, principal.tenantId, project.id, { status: 'active' });
  if (project.phase === 'CREATED') await startFlow(db, principal, project.id);
  let phase: ProjectRow['phase'] = project.phase === 'CREATED' ? 'DISCOVERY' : project.phase;
  while (phaseIndex(phase) < phaseIndex(target)) {
    const next = phaseAfter(phase) as Exclude<FlowPhase, 'DISCOVERY'>;
    await transitionFlow(db, principal, { projectId: project.id, targetPhase: next });
    phase = next;
  }
}

function phaseInvalid(project: ProjectRow, why: string): AppError {
  return new AppError('PHASE_INVALID', `The project is ${basicStatusOf(project)} (phase ${project.phase}): ${why}`, { currentStatus: basicStatusOf(project), currentPhase: project.phase });
}

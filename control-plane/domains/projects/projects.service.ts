import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, ProjectRow } from '../../db/database.ts';
import { conflict, forbidden, invalid, notFound } from '../../errors/app-error.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import type { Paging } from '../../http/paging.ts';
import { deleteBlobs } from '../blobs/blobs.repository.ts';
import { deleteFlowOfProject } from '../flow/flow.repository.ts';
import { deleteAgentExecutionsOfProject } from '../agents/agents.repository.ts';
import { deleteTasksOfProject } from '../tasks/tasks.repository.ts';
import { deleteUserStoriesOfProject } from '../user-stories/user-stories.repository.ts';
import { deleteSpecificationsOfProject } from '../specifications/specifications.repository.ts';
import { requireOrganizationRole } from '../organizations/organization-access.ts';
import { defaultOrganizationOfUser } from '../organizations/organizations.repository.ts';
import { projectScopeFor } from './project-scope.ts';
import { progressKeys, type CreateProjectInput, type ProjectDetail, type ProjectStatusFilter, type ProjectSummary, type UpdateProjectInput } from './projects.schema.ts';
import {
  deleteKitExecutionsOfProject,
  deleteKitOutputsOfProject,
  lockKitExecutionsOfProject,
  deleteProjectRow,
  deleteProjectRows,
  findProject,
  insertProject,
  listProjects,
  updateProject,
} from './projects.repository.ts';

type ProgressKey = (typeof progressKeys)[number];

function progressOf(row: ProjectRow): { overall: number; byPhase: Record<ProgressKey, number> } {
  const stored = row.progress ?? {};
  const byPhase = Object.fromEntries(progressKeys.map((key) => [key, clamp(stored[key])])) as Record<ProgressKey, number>;
  const overall = progressKeys.reduce((sum, key) => sum + byPhase[key], 0) / progressKeys.length;
  return { overall: Math.round(overall * 1000) / 1000, byPhase };
}

const clamp = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0);
const iso = (value: Date | null) => value?.toISOString() ?? null;

function projectRowToSummary(row: ProjectRow): ProjectSummary {
  const { overall, byPhase } = progressOf(row);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    status: row.status,
    phase: row.phase,
    organizationId: row.organization_id,
    progress: { overall, ...byPhase },
    metadata: row.metadata,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function projectRowToDetail(row: ProjectRow): ProjectDetail {
  const { progress: _listForm, ...summary } = projectRowToSummary(row);
  return {
    ...summary,
    template: row.template,
    progress: progressOf(row),
    discoveryStartedAt: iso(row.discovery_started_at),
    discoveryCompletedAt: iso(row.discovery_completed_at),
    featureSelectionStartedAt: iso(row.feature_selection_started_at),
    featureSelectionCompletedAt: iso(row.feature_selection_completed_at),
    planGenerationStartedAt: iso(row.plan_generation_started_at),
    discoveryOutput: row.discovery_output,
    selectedFeatures: row.selected_features,
    ontologyCoverage: row.ontology_coverage,
  };
}

export async function listProjectsForCaller(db: Kysely<Database>, principal: Principal, filter: Paging & { status?: ProjectStatusFilter | undefined }) {
  const { status, ...paging } = filter;
  const { rows, ...page } = await listProjects(db, projectScopeFor(principal), { ...paging, status: status === 'all' ? undefined : status });
  return { projects: rows.map(projectRowToSummary), ...page };
}

/** `options.id`: the caller's own id for the project (Variant A); one already taken is CONFLICT. */
export async function createProjectForCaller(db: Kysely<Database>, principal: Principal, input: CreateProjectInput, options: { id?: string | undefined } = {}): Promise<ProjectDetail> {
  // A project is made by a member of its organization, and a user belongs to one tenant only: a
  // platform admin acting in another tenant sees, changes and deletes its projects but makes none.
  // Said as such, not as "organizationId is required" (sending one only met ORG_NOT_MEMBER next).
  if (principal.tenantId !== principal.homeTenantId) {
    throw forbidden('A project is created by a member of its organization; acting in another tenant (X-Tenant-ID), a platform admin sees, changes and deletes its projects but creates none there');
  }
  // Every project belongs to an organization: named, or the caller's own (customers have none).
  const organizationId = input.organizationId ?? (await defaultOrganizationOfUser(db, principal.tenantId, principal.userId));
  if (!organizationId) throw invalid('organizationId is required: you belong to no organization as its owner, an admin or a member', { issues: [{ field: 'organizationId', issue: 'required' }] });
  await requireOrganizationRole(db, principal, organizationId, 'member');
  const row = await insertProject(db, {
    id: options.id,
    tenantId: principal.tenantId,
    organizationId,
    name: input.name,
    description: input.description ?? null,
    template: input.template ?? null,
    metadata: input.metadata ?? {},
    createdBy: principal.userId,
  }).catch((error: unknown) => {
    // Ids are unique across tenants: the taken one may be another tenant's, which this does not say.
    if (isUniqueViolation(error, 'projects_pkey')) throw conflict('A project with this id already exists; leave id out to have one made up');
    throw error;
  });
  return projectRowToDetail(row);
}

async function requireProject(db: Kysely<Database>, principal: Principal, projectId: string, lock?: 'update' | 'keyShare'): Promise<ProjectRow> {
  const project = await findProject(db, projectScopeFor(principal), projectId, lock ? { lock } : {});
  if (!project) throw notFound('The project');
  return project;
}

/** `lock: 'keyShare'` for a caller about to write a row that references the project (see findProject). */
export async function getProjectForCaller(db: Kysely<Database>, principal: Principal, projectId: string, lock?: 'keyShare'): Promise<ProjectDetail> {
  return projectRowToDetail(await requireProject(db, principal, projectId, lock));
}

/** A PATCH that names no field changes nothing, `updatedAt` included: it answers the project as it is. */
export async function updateProjectForCaller(db: Kysely<Database>, principal: Principal, input: UpdateProjectInput): Promise<ProjectDetail> {
  const project = await requireProject(db, principal, input.projectId, 'update');
  const { projectId, ...changes } = input;
  if (Object.keys(changes).length === 0) return projectRowToDetail(project);
  return projectRowToDetail(await updateProject(db, principal.tenantId, projectId, changes));
}

/**
 * Deletes a project and every row that belongs to it, children first, in the request's transaction:
 * its kit executions with their outputs and bundle blobs, its kit credentials, its assignments,
 * its flow's answers and questions, its tasks with their dependencies and submissions, its user
 * stories, its agent executions with their calls, and its specifications.
 * Each table is deleted explicitly (not left to ON DELETE CASCADE) so the answer counts every row;
 * blobs have no foreign key to cascade along and would otherwise outlive the project.
 */
export async function deleteProjectForCaller(db: Kysely<Database>, principal: Principal, projectId: string) {
  const project = await requireProject(db, principal, projectId, 'update');
  // Deleting is for the organization's admins and owners; a platform admin acting in the tenant may too.
  if (projectScopeFor(principal).userId && project.organization_id) await requireOrganizationRole(db, principal, project.organization_id, 'admin');
  const { tenantId } = principal;
  const removed: Array<[table: string, rows: number]> = [];
  await lockKitExecutionsOfProject(db, tenantId, projectId);
  removed.push(['kit_outputs', await deleteKitOutputsOfProject(db, tenantId, projectId)]);
  const executions = await deleteKitExecutionsOfProject(db, tenantId, projectId);
  removed.push(['kit_executions', executions.count]);
  removed.push(['blobs', await deleteBlobs(db, tenantId, executions.bundleBlobIds)]);
  for (const table of ['kit_credentials', 'agency_project_assignments'] as const) removed.push([table, await deleteProjectRows(db, table, tenantId, projectId)]);
  const flow = await deleteFlowOfProject(db, tenantId, projectId);
  removed.push(['flow_answers', flow.answers], ['flow_questions', flow.questions]);
  const tasks = await deleteTasksOfProject(db, tenantId, projectId);
  removed.push(['task_submissions', tasks.submissions], ['task_dependencies', tasks.dependencies], ['tasks', tasks.tasks]);
  removed.push(['user_stories', await deleteUserStoriesOfProject(db, tenantId, projectId)]);
  const agentRuns = await deleteAgentExecutionsOfProject(db, tenantId, projectId);
  removed.push(['agent_calls', agentRuns.calls], ['agent_executions', agentRuns.executions]);
  removed.push(['specifications', await deleteSpecificationsOfProject(db, tenantId, projectId)]);
  removed.push(['projects', await deleteProjectRow(db, tenantId, projectId)]);
  return {
    projectId: project.id,
    deletedTables: removed.filter(([table, rows]) => rows > 0 || table === 'projects').map(([table]) => table),
    rowsDeleted: removed.reduce((sum, [, rows]) => sum + rows, 0),
  };
}

import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, ProjectRow } from '../../db/database.ts';
import { notFound } from '../../errors/app-error.ts';
import { projectScopeFor } from './project-scope.ts';
import { findProject, lockAccessToProject } from './projects.repository.ts';

/**
 * The project, if the caller sees it; NOT_FOUND otherwise, naming `unseen` — what the caller asked
 * for ("The project", or "The task" of one they do not see, as an unknown id of it answers), so the
 * message tells nothing of what exists. With a `lock` (a write), the project is locked and so is
 * the caller's membership or assignment, read again once the project is theirs: a removal that
 * answered while the write waited (for the project, or on its way) leaves it NOT_FOUND, and one
 * that comes later waits for the write.
 */
export async function requireProjectForCaller(
  db: Kysely<Database>,
  principal: Principal,
  projectId: string,
  options: { lock?: 'update' | 'keyShare' | undefined; unseen?: string } = {},
): Promise<ProjectRow> {
  const scope = projectScopeFor(principal);
  const unseen = options.unseen ?? 'The project';
  const project = await findProject(db, scope, projectId, options.lock ? { lock: options.lock } : {});
  if (!project) throw notFound(unseen);
  if (options.lock && scope.userId && !(await lockAccessToProject(db, project.tenant_id, project, scope.userId))) throw notFound(unseen);
  return project;
}

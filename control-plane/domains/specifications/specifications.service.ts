import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, ProjectRow, SpecificationRow } from '../../db/database.ts';
import { conflict, notFound } from '../../errors/app-error.ts';
import { quotedId } from '../../errors/quoted-input.ts';
import { addJob } from '../../jobs/add-job.ts';
import { listQuestions } from '../flow/flow.repository.ts';
import { requireProjectMember } from '../projects/project-member.ts';
import { projectScopeFor } from '../projects/project-scope.ts';
import { requireProjectForCaller } from '../projects/project-for-caller.ts';
import { findProject } from '../projects/projects.repository.ts';
import { userStoriesOfProject } from '../user-stories/user-stories.repository.ts';
import { COMPILE_JOB_ATTEMPTS, compileJobKey, compileSpecificationJob } from './compile-specification.job.ts';
import type { CompileInput, CompileOptions } from './compile-specification.ts';
import type { CompileSpecificationInput, SpecificationOutput } from './specifications.schema.ts';
import { findSpecification, insertSpecification, nextSpecificationVersion } from './specifications.repository.ts';

/** A deterministic compile of a few hundred answers takes well under a second once the worker has it. */
const ESTIMATED_SECONDS = 1;

/**
 * What the project's flow says now: every answer of an asked question, with the labels its options
 * carry; and its user stories, oldest first (left out when it has none, so such a project's input
 * is what it was before stories existed).
 */
export async function compileInputOf(db: Kysely<Database>, project: ProjectRow): Promise<CompileInput> {
  const questions = (await listQuestions(db, project.tenant_id, project.id)).filter((question) => !question.suppressed);
  const stories = await userStoriesOfProject(db, project.tenant_id, project.id);
  return {
    project: { id: project.id, name: project.name, description: project.description },
    phase: project.phase,
    answers: questions.flatMap((question) => {
      if (!question.answer) return [];
      const { value, confidence } = question.answer;
      const chosen = Array.isArray(value) ? value : typeof value === 'string' && question.answer_type === 'select' ? [value] : null;
      const labels = chosen && chosen.map((choice) => question.options.find((option) => option.value === choice)?.label ?? choice);
      return [{ key: question.key, value, confidence, labels }];
    }),
    unanswered: questions.filter((question) => question.required && !question.answer).map((question) => question.key),
    ...(stories.length > 0
      ? { userStories: stories.map((story) => ({ title: story.title, description: story.description, priority: story.priority, acceptanceCriteria: story.acceptance_criteria })) }
      : {}),
  };
}

/** The options a compile takes: what the request names, and for what it leaves out, what the project's answers decide. */
export function compileOptionsFor(requested: Partial<CompileOptions> | undefined, compileInput: CompileInput): CompileOptions {
  const answered = (key: string) => compileInput.answers.find((answer) => answer.key === key)?.value;
  return {
    format: requested?.format ?? (answered('specFormat') === 'v2' ? 'v2' : 'v1'),
    includeTestPlan: requested?.includeTestPlan ?? answered('includeTestPlan') === true,
    includeTaskGraph: requested?.includeTaskGraph ?? false,
    includeRunbook: requested?.includeRunbook ?? false,
  };
}

/**
 * Takes what the project's flow says now and has the worker compile it (the compiling class of the
 * rate limit: 5 a minute). Compiles of one project take turns for their version numbers; the job
 * exists only if the specification's row commits.
 */
export async function compileProjectSpecification(db: Kysely<Database>, principal: Principal, input: CompileSpecificationInput) {
  // Locked with the caller's access: a removal that answered while this compile waited leaves it NOT_FOUND.
  const project = await requireProjectForCaller(db, principal, input.projectId, { lock: 'update' });
  // Compiling is for the organization's members, admins and owners, and a platform admin acting in the tenant.
  await requireProjectMember(db, principal, project, 'compiles it');
  if (project.phase === 'CREATED') throw conflict('The flow has not started, so there is nothing to compile: POST /flow/start begins discovery');
  const compileInput = await compileInputOf(db, project);
  const options = compileOptionsFor(input.options, compileInput);
  const specification = await insertSpecification(db, {
    tenantId: project.tenant_id,
    projectId: project.id,
    version: await nextSpecificationVersion(db, project.tenant_id, project.id),
    options: { ...options },
    input: { ...compileInput },
    createdBy: principal.tenantId === principal.homeTenantId ? principal.userId : null,
  });
  // The payload names the specification only: its input stays in the database.
  await addJob(db, compileSpecificationJob.name, { specificationId: specification.id, tenantId: project.tenant_id }, { jobKey: compileJobKey(specification.id), maxAttempts: COMPILE_JOB_ATTEMPTS });
  return { specId: specification.id, status: 'compiling' as const, estimatedTime: ESTIMATED_SECONDS, statusUrl: `/api/specification/${specification.id}` };
}

function specificationToOutput(row: SpecificationRow): SpecificationOutput {
  return {
    id: row.id,
    projectId: row.project_id,
    version: String(row.version),
    status: row.status,
    createdAt: row.created_at.toISOString(),
    compiledAt: row.compiled_at?.toISOString() ?? null,
    spec: row.spec as SpecificationOutput['spec'],
    validation: row.validation as SpecificationOutput['validation'],
    errorMessage: row.error_message,
  };
}

/** A specification, to whoever sees its project (customers included); NOT_FOUND otherwise. */
export async function getSpecification(db: Kysely<Database>, principal: Principal, specificationId: string): Promise<SpecificationOutput> {
  const specification = await findSpecification(db, principal.tenantId, specificationId);
  if (!specification || !(await findProject(db, projectScopeFor(principal), specification.project_id))) throw notFound('The specification');
  return specificationToOutput(specification);
}

/**
 * What a compiled specification gives a kit execution: its entities, as the built-in kits read them
 * (`discoveryAnswers.entities`: name, fields, operations). The specification must be the project's
 * (NOT_FOUND otherwise) and completed (CONFLICT otherwise); the execution stores what it was given,
 * so a later compile changes no past run.
 */
export async function kitInputOfSpecification(db: Kysely<Database>, tenantId: string, projectId: string, specificationId: string) {
  const specification = await findSpecification(db, tenantId, specificationId);
  if (!specification || specification.project_id !== projectId) throw notFound(`Specification ${quotedId(specificationId)} of this project`);
  if (specification.status !== 'completed') throw conflict(`Specification ${quotedId(specificationId)} is ${specification.status}, not completed: it has no entities to give yet`);
  const { entities } = specification.spec as unknown as NonNullable<SpecificationOutput['spec']>;
  return { entities: entities.map(({ name, fields, operations }) => ({ name, fields, operations })) };
}

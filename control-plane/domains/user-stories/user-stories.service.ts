import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, ProjectRow, UserStoryRow } from '../../db/database.ts';
import { pagingOf } from '../../basic/basic-paging.ts';
import { conflict, invalid, notFound } from '../../errors/app-error.ts';
import { requireProjectMember } from '../projects/project-member.ts';
import { projectScopeFor } from '../projects/project-scope.ts';
import { requireProjectForCaller } from '../projects/project-for-caller.ts';
import type { UserStoryInput, UserStoryListInput, UserStoryOutput, UserStoryPatchInput } from './user-stories.schema.ts';
import {
  countUserStoriesOfProject,
  deleteUserStory,
  findUserStory,
  insertUserStory,
  listUserStories,
  lockStoriesOfProject,
  updateUserStory,
  type UserStoryContent,
} from './user-stories.repository.ts';

/**
 * A project's user stories, to whoever sees the project; written by its organization's members,
 * admins and owners (and a platform admin acting in the tenant), as its tasks are: its customer
 * reads them and is FORBIDDEN to write them. A story the caller does not see is NOT_FOUND, as an
 * unknown id is.
 */

const UNSEEN = 'The user story';

/**
 * The most stories a project holds. A story may carry some 200 KB of text (100 criteria of 2,000
 * characters, and a description), and a compile takes all of the project's stories into its stored
 * input and twice into its specification (the requirements, and the test cases expecting their
 * criteria): unbounded, a project's compile would outgrow what a jsonb value holds (about 255 MB,
 * some 600 such stories) and fail every time, its specification too large to answer.
 */
export const MAX_STORIES_PER_PROJECT = 200;

function userStoryToOutput(row: UserStoryRow): UserStoryOutput {
  return {
    id: row.id,
    projectId: row.project_id,
    title: row.title,
    ...(row.description === null ? {} : { description: row.description }),
    priority: row.priority,
    status: row.status,
    acceptanceCriteria: row.acceptance_criteria,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** What a create or a PUT stores: the input, and for each field left out its default. */
function contentOf(input: UserStoryInput): UserStoryContent {
  return {
    title: input.title,
    description: input.description ?? null,
    priority: input.priority ?? 'medium',
    status: input.status ?? 'draft',
    acceptanceCriteria: input.acceptanceCriteria ?? [],
  };
}

const requireWriter = (db: Kysely<Database>, principal: Principal, project: ProjectRow) => requireProjectMember(db, principal, project, 'writes its user stories');

/** The story, if the caller sees its project; NOT_FOUND (one answer for unknown and unseen) otherwise. */
async function requireStory(db: Kysely<Database>, principal: Principal, id: string): Promise<UserStoryRow> {
  const story = await findUserStory(db, principal.tenantId, id);
  if (!story) throw notFound(UNSEEN);
  await requireProjectForCaller(db, principal, story.project_id, { unseen: UNSEEN });
  return story;
}

/**
 * The story, locked for a change, if the caller may write it. The project is locked before the
 * story, in the order a project delete takes them, so the two wait for each other rather than
 * deadlock; a story deleted meanwhile (with its project, or alone) is NOT_FOUND.
 */
async function requireStoryToWrite(db: Kysely<Database>, principal: Principal, id: string): Promise<UserStoryRow> {
  const found = await findUserStory(db, principal.tenantId, id);
  if (!found) throw notFound(UNSEEN);
  const project = await requireProjectForCaller(db, principal, found.project_id, { lock: 'keyShare', unseen: UNSEEN });
  await requireWriter(db, principal, project);
  const story = await findUserStory(db, principal.tenantId, id, 'update');
  if (!story) throw notFound(UNSEEN);
  return story;
}

/** A story stays in its project: a projectId other than its own is refused, naming the field. */
function requireSameProject(story: UserStoryRow, projectId: string | undefined): void {
  if (projectId !== undefined && projectId !== story.project_id) {
    throw invalid('A user story stays in its project: projectId must be its own', { issues: [{ field: 'projectId', issue: `must be the story's project, ${story.project_id}` }] });
  }
}

/** The stories of the projects the caller sees (or of one of them), a page of them in the order asked. */
export async function listUserStoriesForCaller(db: Kysely<Database>, principal: Principal, query: UserStoryListInput) {
  const { rows, total } = await listUserStories(db, projectScopeFor(principal), { ...pagingOf(query), projectId: query.projectId, sort: query.sort, order: query.order });
  return { items: rows.map(userStoryToOutput), total, page: query.page, pageSize: query.pageSize };
}

/** A new story in a project the caller sees and may write; the id the caller chose (CONFLICT when taken), or a new one; CONFLICT when the project holds its most. */
export async function createUserStoryForCaller(db: Kysely<Database>, principal: Principal, input: UserStoryInput): Promise<UserStoryOutput> {
  const project = await requireProjectForCaller(db, principal, input.projectId, { lock: 'keyShare' });
  await requireWriter(db, principal, project);
  await lockStoriesOfProject(db, project.tenant_id, project.id);
  if ((await countUserStoriesOfProject(db, project.tenant_id, project.id)) >= MAX_STORIES_PER_PROJECT) {
    throw conflict(`The project has ${MAX_STORIES_PER_PROJECT} user stories, the most it may hold; delete one to add another`);
  }
  const story = await insertUserStory(db, {
    ...contentOf(input),
    id: input.id,
    tenantId: project.tenant_id,
    projectId: project.id,
    createdBy: principal.tenantId === principal.homeTenantId ? principal.userId : null,
  });
  if (!story) throw conflict('A user story with this id already exists');
  return userStoryToOutput(story);
}

export async function getUserStoryForCaller(db: Kysely<Database>, principal: Principal, id: string): Promise<UserStoryOutput> {
  return userStoryToOutput(await requireStory(db, principal, id));
}

/** PUT: the input replaces the story whole, a field left out taking its default; its id and project stay. */
export async function replaceUserStoryForCaller(db: Kysely<Database>, principal: Principal, id: string, input: UserStoryInput): Promise<UserStoryOutput> {
  if (input.id !== undefined && input.id !== id) {
    throw invalid('The id in the body must be the one in the path', { issues: [{ field: 'id', issue: `must be ${id}, the path's, or absent` }] });
  }
  const story = await requireStoryToWrite(db, principal, id);
  requireSameProject(story, input.projectId);
  return userStoryToOutput(await updateUserStory(db, story.tenant_id, story.id, contentOf(input)));
}

/** PATCH: only the fields sent change; when none does, the story is answered as it is, updatedAt included. */
export async function updateUserStoryForCaller(db: Kysely<Database>, principal: Principal, id: string, patch: UserStoryPatchInput): Promise<UserStoryOutput> {
  const story = await requireStoryToWrite(db, principal, id);
  const { projectId, ...fields } = patch;
  requireSameProject(story, projectId);
  const changes = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<UserStoryContent>;
  if (Object.keys(changes).length === 0) return userStoryToOutput(story);
  return userStoryToOutput(await updateUserStory(db, story.tenant_id, story.id, changes));
}

export async function deleteUserStoryForCaller(db: Kysely<Database>, principal: Principal, id: string): Promise<void> {
  const story = await requireStoryToWrite(db, principal, id);
  await deleteUserStory(db, story.tenant_id, story.id);
}

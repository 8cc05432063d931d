import { describe, expect, it } from 'vitest';
import { userStoryInput, userStoryListInput, userStoryPatchInput } from './user-stories.schema.ts';

/** What a story's body may say, as the 400 names it: the field at fault, before anything is stored. */

const PROJECT = '0b0e7c39-4a9f-4c1e-9d3a-2f6f2f0a1b2c';
const fieldsRefused = (result: { error?: { issues: Array<{ path: PropertyKey[] }> } | undefined }) => result.error?.issues.map((issue) => issue.path.join('.')) ?? [];

describe('a user story body', () => {
  it('needs projectId and a title that shows something; takes an id in any letter case as its lower-case spelling', () => {
    expect(fieldsRefused(userStoryInput.safeParse({}))).toEqual(['projectId', 'title']);
    expect(fieldsRefused(userStoryInput.safeParse({ projectId: PROJECT, title: '\u200b ' }))).toEqual(['title']);
    expect(userStoryInput.parse({ id: PROJECT.toUpperCase(), projectId: PROJECT.toUpperCase(), title: ' Book ' })).toEqual({ id: PROJECT, projectId: PROJECT, title: 'Book' });
  });

  it('refuses text PostgreSQL cannot store, naming where it is', () => {
    const result = userStoryInput.safeParse({ projectId: PROJECT, title: 'a\u0000b', description: '\ud800', acceptanceCriteria: ['fine', 'not\u0000fine'] });
    expect(fieldsRefused(result).sort()).toEqual(['acceptanceCriteria.1', 'description', 'title']);
  });

  it('takes acceptance criteria trimmed, each 1 to 2,000 characters, at most 100 of them', () => {
    expect(userStoryInput.parse({ projectId: PROJECT, title: 't', acceptanceCriteria: ['  shown  '] }).acceptanceCriteria).toEqual(['shown']);
    expect(fieldsRefused(userStoryInput.safeParse({ projectId: PROJECT, title: 't', acceptanceCriteria: ['ok', '   ', 'x'.repeat(2_001)] }))).toEqual(['acceptanceCriteria.1', 'acceptanceCriteria.2']);
    expect(fieldsRefused(userStoryInput.safeParse({ projectId: PROJECT, title: 't', acceptanceCriteria: Array(101).fill('c') }))).toEqual(['acceptanceCriteria']);
    expect(fieldsRefused(userStoryInput.safeParse({ projectId: PROJECT, title: 't', acceptanceCriteria: [{ text: 'c' }] }))).toEqual(['acceptanceCriteria.0']);
  });

  it('refuses a field it does not know (read-only ones included), and a PATCH an id', () => {
    expect(userStoryInput.safeParse({ projectId: PROJECT, title: 't', createdAt: '2024-01-01T00:00:00Z' }).error?.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['createdAt'] });
    expect(userStoryPatchInput.safeParse({ id: PROJECT }).error?.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['id'] });
    expect(userStoryPatchInput.parse({})).toEqual({});
    expect(fieldsRefused(userStoryPatchInput.safeParse({ priority: 'urgent', status: 'blocked' }))).toEqual(['priority', 'status']);
  });
});

describe('a user story list query', () => {
  it('sorts by the fields it names only, page 1 of 20 by creation time by default, and filters by a project', () => {
    expect(userStoryListInput.parse({})).toEqual({ page: 1, pageSize: 20, sort: 'createdAt', order: 'asc' });
    expect(userStoryListInput.parse({ sort: 'priority', order: 'desc', projectId: PROJECT.toUpperCase() })).toMatchObject({ sort: 'priority', order: 'desc', projectId: PROJECT });
    expect(fieldsRefused(userStoryListInput.safeParse({ sort: 'acceptanceCriteria', projectId: 'nope' }))).toEqual(['sort', 'projectId']);
  });
});

import { describe, expect, it } from 'vitest';
import { agentCallRequest, outputSchemaOf } from '../agents/agent-call-request.ts';
import type { PlannedStep } from '../agents/agent-strategies.ts';
import { draftOffline } from '../agents/offline-drafts.ts';
import { definitionOfDone } from '../exports/export-contents.ts';
import { compileSpecification, type CompileInput, type CompileOptions, type CompileUserStory } from './compile-specification.ts';
import { specificationOutput } from './specifications.schema.ts';

/**
 * User stories feed the compiled specification's requirements (DESIGN §5.2): each story a
 * functional requirement after the features', with its acceptance criteria; a project without
 * stories compiles exactly as it did before they existed. Inputs are built as compileInputOf builds
 * them (labels of the options chosen; `userStories` only when there are some).
 */

const PROJECT = { id: '0b0e7c39-4a9f-4c1e-9d3a-2f6f2f0a1b2c', name: 'Clinic bookings', description: null };
const ALL: CompileOptions = { format: 'v2', includeTestPlan: true, includeTaskGraph: true, includeRunbook: true };

const FLOW: CompileInput = {
  project: PROJECT,
  phase: 'SPECIFICATION',
  answers: [
    { key: 'problem', value: 'Small clinics lose bookings after hours.', confidence: 0.9, labels: null },
    { key: 'entities', value: 'Appointment, Patient', confidence: 0.9, labels: null },
    { key: 'features', value: ['manage-appointment'], confidence: 0.9, labels: ['Manage Appointment'] },
    { key: 'compliance', value: ['gdpr'], confidence: 0.9, labels: ['GDPR'] },
  ],
  unanswered: [],
};

const STORIES: CompileUserStory[] = [
  { title: 'Book a slot online', description: 'As a patient I book a free slot at any hour.', priority: 'critical', acceptanceCriteria: ['Free slots are shown', 'A booked slot is held'] },
  { title: 'Cancel a booking', description: null, priority: 'low', acceptanceCriteria: [] },
  { title: 'Remind the patient', description: 'A day ahead, by email.', priority: 'medium', acceptanceCriteria: ['An email goes out 24 hours ahead'] },
  { title: 'See the day', description: '', priority: 'high', acceptanceCriteria: [] },
];

const compile = (input: CompileInput, options: CompileOptions = ALL) => compileSpecification(input, options, 1);

describe('user stories in the compiled specification', () => {
  it("become functional requirements after the features' and before the non-functional ones, numbered in their order, their priority in the requirements' words, their criteria carried", () => {
    const { spec } = compile({ ...FLOW, userStories: STORIES });
    expect(spec.requirements.map((requirement) => [requirement.id, requirement.kind, requirement.priority, requirement.source])).toEqual([
      ['FR-001', 'functional', 'must', 'features.manage-appointment'],
      ['US-001', 'functional', 'must', 'user-story'],
      ['US-002', 'functional', 'could', 'user-story'],
      ['US-003', 'functional', 'should', 'user-story'],
      ['US-004', 'functional', 'must', 'user-story'],
      ['NFR-001', 'non-functional', 'must', 'compliance'],
    ]);
    const [first, second, , fourth] = spec.requirements.filter((requirement) => requirement.source === 'user-story');
    expect(first).toEqual({
      id: 'US-001',
      kind: 'functional',
      title: 'Book a slot online',
      description: 'As a patient I book a free slot at any hour.',
      priority: 'must',
      source: 'user-story',
      acceptanceCriteria: ['Free slots are shown', 'A booked slot is held'],
    });
    // No description (none, or empty): the title says what it is.
    expect([second!.description, fourth!.description]).toEqual(['Cancel a booking', 'See the day']);
    expect(second).toMatchObject({ acceptanceCriteria: [] });
    // A feature's requirement has no criteria to carry, and no empty list of them either.
    expect(spec.requirements[0]).not.toHaveProperty('acceptanceCriteria');
    expect(specificationOutput.shape.spec.safeParse(spec).error).toBeUndefined();
  });

  it("give each its test case, expecting its acceptance criteria where it states some", () => {
    const { spec } = compile({ ...FLOW, userStories: STORIES });
    const expected = Object.fromEntries(spec.testCases.map((test) => [test.requirementId, test.expected]));
    expect(expected['US-001']).toBe('Free slots are shown; A booked slot is held');
    expect(expected['US-002']).toBe('Cancel a booking works end to end');
    expect(spec.testCases.map((test) => test.id)).toEqual(spec.testCases.map((_, index) => `TC-${String(index + 1).padStart(3, '0')}`));
  });

  it('leave a project without stories compiled exactly as before, whether its input says none or predates them', () => {
    const before = JSON.stringify(compile(FLOW));
    expect(JSON.stringify(compile({ ...FLOW, userStories: [] }))).toBe(before);
    expect(before).not.toContain('acceptanceCriteria');
    expect(before).not.toContain('US-');
  });

  it('are functional requirements enough for a specification to pass without a selected feature; with neither it fails as before', () => {
    const withoutFeatures = { ...FLOW, answers: FLOW.answers.filter((answer) => answer.key !== 'features') };
    expect(compile(withoutFeatures).validation.errors.map((error) => error.code)).toEqual(['no_features']);
    const { validation } = compile({ ...withoutFeatures, userStories: [STORIES[1]!] });
    expect(validation).toEqual({ passed: true, errors: [], warnings: [] });
  });
});

describe('user stories in what the specification is exported with', () => {
  it('are each a thing to build in the task graph, on the models and before the release', () => {
    const { spec } = compile({ ...FLOW, userStories: STORIES.slice(0, 2) });
    expect(spec.taskGraph!.tasks.map((task) => [task.id, task.title, task.dependsOn])).toEqual([
      ['T1', 'Model Appointment', []],
      ['T2', 'Model Patient', []],
      ['T3', 'Build Manage Appointment', ['T1', 'T2']],
      ['T4', 'Build Book a slot online', ['T1', 'T2']],
      ['T5', 'Build Cancel a booking', ['T1', 'T2']],
      ['T6', 'Release', ['T3', 'T4', 'T5']],
    ]);
  });

  it('are done, without a test plan, when their acceptance criteria hold; a story without criteria by a review', () => {
    const { spec } = compile({ ...FLOW, userStories: STORIES.slice(0, 2) }, { ...ALL, includeTestPlan: false });
    const doneWhen = Object.fromEntries(definitionOfDone(spec).requirements.map((requirement) => [requirement.requirementId, requirement.doneWhen]));
    expect(doneWhen['US-001']).toEqual(['Free slots are shown', 'A booked slot is held']);
    expect(doneWhen['US-002']).toEqual(['A review confirms it']);
    expect(doneWhen['FR-001']).toEqual(['A review confirms it']);
  });
});

describe('user stories and the agents', () => {
  const team: PlannedStep[] = [{ step: 1, agent: 'analyst', task: 'draft', sections: ['overview', 'requirements'], reads: [], wave: 1 }];
  const review: PlannedStep = { step: 2, agent: 'supervisor', task: 'review', sections: [], reads: [1], wave: 2 };
  const input = { ...FLOW, answers: FLOW.answers.filter((answer) => answer.key !== 'features'), userStories: STORIES };

  it("draft offline the stories' requirements in the shape a draft must have, and the review approves a specification they carry", () => {
    const draft = draftOffline({ step: team[0]!, input, options: ALL, team, read: [] }) as { requirements: Array<{ id: string }> };
    expect(outputSchemaOf(team[0]!).safeParse(draft).error).toBeUndefined();
    expect(draft.requirements.map((requirement) => requirement.id)).toEqual(['US-001', 'US-002', 'US-003', 'US-004', 'NFR-001']);
    expect(draftOffline({ step: review, input, options: ALL, team, read: [{ step: team[0]!, output: draft }] })).toEqual({ approved: true, notes: [] });
  });

  it("put the stories in a drafting agent's prompt, and leave the prompt of a project without them as it was", () => {
    const context = { step: team[0]!, options: ALL, team, read: [] };
    expect(agentCallRequest({ ...context, input }).prompt).toContain('"title":"Book a slot online"');
    const without = agentCallRequest({ ...context, input: FLOW });
    const none = agentCallRequest({ ...context, input: { ...FLOW, userStories: [] } });
    expect([none.prompt, none.promptHash]).toEqual([without.prompt, without.promptHash]);
    expect(without.prompt).not.toContain('User stories');
  });
});

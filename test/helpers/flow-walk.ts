import { expect } from 'vitest';
import { call, type ApiResponse } from './http.ts';
import { ownerQuery } from './owner-sql.ts';
import type { TestApp } from './test-app.ts';

/** A question as the flow's routes answer it, with what the tests look at. */
export type FlowQuestion = {
  id: string;
  key: string;
  answerType: string;
  options: Array<{ value: string; label: string }>;
  prefill: { value: unknown; confidence: number } | null;
};

/**
 * One caller's way through projects and their flow over /api: create a project, start it, answer a
 * question, answer a whole phase. Every step that should succeed is asserted to.
 */
export function flowWalker(app: TestApp, apiKey: string, organizationId: string) {
  const post = (path: string, body: unknown): Promise<ApiResponse> => call(app.url, `/api${path}`, { apiKey, body });
  const get = (path: string): Promise<ApiResponse> => call(app.url, `/api${path}`, { apiKey });

  async function newProject(name: string, description?: string): Promise<string> {
    const created = await post('/projects', { name, organizationId, ...(description === undefined ? {} : { description }) });
    expect(created.status, created.text).toBe(201);
    return created.body.data.id;
  }

  /** A new project with its flow started: the start's answer, and each question's id by key. */
  async function startedProject(name: string, description?: string) {
    const projectId = await newProject(name, description);
    const started = await post('/flow/start', { projectId });
    expect(started.status, started.text).toBe(200);
    const rows = await ownerQuery(app.database.ownerUrl, 'select id, key from flow_questions where project_id = $1', [projectId]);
    return { projectId, started: started.body.data, id: (key: string): string => rows.find((row: { key: string }) => row.key === key)!.id };
  }

  async function answer(projectId: string, questionId: string, value: unknown, extra: Record<string, unknown> = {}) {
    const response = await post('/flow/answer-question', { projectId, questionId, answer: { value, ...extra } });
    expect(response.status, response.text).toBe(200);
    return response.body.data;
  }

  /** Answers the current phase's questions with `answers[key]`, or the prefill, until none is left or one has neither. */
  async function answerPhase(projectId: string, answers: Record<string, unknown>) {
    for (;;) {
      const next = await post('/flow/get-next-question', { projectId });
      expect(next.status, next.text).toBe(200);
      const question: FlowQuestion | null = next.body.data.question;
      if (!question) return;
      const value = question.key in answers ? answers[question.key] : question.prefill?.value;
      if (value === undefined) return;
      await answer(projectId, question.id, value);
    }
  }

  /** A new project whose flow walked to SPECIFICATION, each phase answered as `answersByPhase` says. */
  async function finishedProject(name: string, answersByPhase = CLINIC_ANSWERS_BY_PHASE, description = 'Online booking for small clinics'): Promise<string> {
    const projectId = await newProject(name, description);
    expect((await post('/flow/start', { projectId })).status).toBe(200);
    for (const [phase, answers] of answersByPhase) {
      if (phase) expect((await post('/flow/transition', { projectId, targetPhase: phase })).status).toBe(200);
      await answerPhase(projectId, answers);
    }
    return projectId;
  }

  return { post, get, newProject, startedProject, answer, answerPhase, finishedProject };
}

/** A clinic-booking product's answers, phase by phase (null: the phase the flow starts in). */
export const CLINIC_ANSWERS_BY_PHASE: Array<[phase: string | null, answers: Record<string, unknown>]> = [
  [null, {
    problem: 'Small clinics lose bookings because patients cannot book online after hours.',
    audience: ['consumers', 'businesses'],
    platforms: ['web'],
    capabilities: ['accounts', 'scheduling'],
    entities: 'clinic, patient, appointment, category',
    multiTenant: true,
    integrations: 'Google Calendar',
    compliance: ['gdpr'],
    scale: 'medium',
  }],
  ['FEATURE_SELECTION', { features: ['bookings', 'sign-in', 'manage-patient'], firstFeature: 'bookings' }],
  ['PLAN_GENERATION', { timeline: 'quarter', teamSize: 3 }],
  ['PLANNING', { releaseStrategy: 'beta_first' }],
  ['VISUAL_DISCOVERY', { visualStyle: 'minimal', brandColors: '#0a5, white' }],
  ['SPECIFICATION', { specFormat: 'v2', includeTestPlan: true }],
];

import { describe, expect, it } from 'vitest';
import type { QuestionWithAnswer } from './flow.repository.ts';
import { readinessOf } from './flow-readiness.ts';

/** A question as the repository reads it: only what readiness looks at matters. */
function question(key: string, weight: number, required: boolean, answered: boolean): QuestionWithAnswer {
  return {
    id: `00000000-0000-4000-8000-${String(weight * 1000 + key.length).padStart(12, '0')}`,
    tenant_id: 't',
    project_id: 'p',
    phase: 'DISCOVERY',
    key,
    position: 0,
    text: key,
    description: '',
    variants: [],
    answer_type: 'text',
    options: [],
    bounds: null,
    required,
    weight,
    prefill: null,
    suppressed: false,
    created_at: new Date(0),
    answer: answered ? { id: 'a', value: 'x', confidence: null } : null,
  };
}

describe('readiness', () => {
  it('names what blocks a phase whose required questions are answered but whose score falls short (a catalogue that weighs optional questions heavily)', () => {
    const readiness = readinessOf('DISCOVERY', [question('goal', 3, true, true), question('budget', 1, false, false), question('team', 1, false, false)]);
    expect(readiness).toMatchObject({ readinessScore: 0.6, threshold: 0.8, isReady: false });
    expect(readiness.blockers).toEqual([
      { type: 'below_threshold', questionId: null, message: 'The readiness score 0.6 is below the threshold 0.8: answer more of the optional questions ("budget", "team")' },
    ]);
    expect(readinessOf('DISCOVERY', [question('goal', 3, true, true), question('budget', 1, false, true), question('team', 1, false, false)])).toMatchObject({ readinessScore: 0.8, isReady: true, blockers: [] });
  });

  it('lists each unanswered required question as a blocker, and no threshold blocker beside them', () => {
    const readiness = readinessOf('DISCOVERY', [question('goal', 3, true, false), question('budget', 1, false, false)]);
    expect(readiness.blockers.map((blocker) => blocker.type)).toEqual(['unanswered_question']);
    expect(readiness.isReady).toBe(false);
  });
});

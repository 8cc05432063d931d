import { describe, expect, it } from 'vitest';
import { questionCatalogue } from './flow-catalogue.ts';
import { flowPhases } from './flow-phases.ts';
import { READINESS_THRESHOLD } from './flow-readiness.ts';

describe('the question catalogue', () => {
  it('lets every phase be ready once its required questions are answered: optional ones raise the score, never block', () => {
    const requiredShare = flowPhases.map((phase) => {
      const questions = questionCatalogue.filter((question) => question.phase === phase);
      const weight = (of: typeof questions) => of.reduce((sum, question) => sum + question.weight, 0);
      return [phase, weight(questions.filter((question) => question.required)) / weight(questions) >= READINESS_THRESHOLD];
    });
    expect(requiredShare).toEqual(flowPhases.map((phase) => [phase, true]));
  });

  it('names each question once, asks at least one required question per phase, and gives a select or multiselect its options', () => {
    expect(new Set(questionCatalogue.map((question) => question.key)).size).toBe(questionCatalogue.length);
    for (const phase of flowPhases) expect([phase, questionCatalogue.some((question) => question.phase === phase && question.required)]).toEqual([phase, true]);
    // The feature questions take the project's candidates as their options when the phase is entered.
    const withoutOptions = questionCatalogue.filter((question) => ['select', 'multiselect'].includes(question.answerType) && !question.options).map((question) => question.key);
    expect(withoutOptions).toEqual(['features', 'firstFeature']);
  });
});

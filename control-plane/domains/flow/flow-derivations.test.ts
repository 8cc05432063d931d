import { describe, expect, it } from 'vitest';
import { questionCatalogue } from './flow-catalogue.ts';
import { featureCandidates, namesIn, ontologyOf, prefillOnEntry, suppressedOnEntry, type AnswersByKey } from './flow-derivations.ts';

const answers = (entries: Record<string, string | string[] | boolean | number>): AnswersByKey =>
  new Map(Object.entries(entries).map(([key, value]) => [key, { value, confidence: null }]));
const question = (key: string) => questionCatalogue.find((candidate) => candidate.key === key)!;
const entityFeatures = (entities: string) => featureCandidates(answers({ entities }));

describe('names in a text answer', () => {
  it('are one name however "é" is typed, and never end in half a character', () => {
    expect(namesIn('Café, Cafe\u0301, CAFÉ, cafe')).toEqual(['Café', 'cafe']);
    const [cut] = namesIn(`${'n'.repeat(99)}😀`);
    expect(cut).toBe('n'.repeat(99));
    expect(cut!.isWellFormed()).toBe(true);
  });

  it('the goal cut from the problem keeps whole characters', () => {
    const [goal] = ontologyOf({ key: 'problem', options: [] }, `${'g'.repeat(119)}😀 more`, 1);
    expect(goal).toEqual({ type: 'goal', name: 'g'.repeat(119), confidence: 1 });
  });
});

describe('feature candidates of entities', () => {
  it('drop accents rather than split words on them', () => {
    expect(entityFeatures('Ünïcödé, ǅemal, İstanbul, straße, Ａｂｃ, ﬁle').map((option) => option.value)).toEqual([
      'manage-unicode', 'manage-dzemal', 'manage-istanbul', 'manage-strasse', 'manage-abc', 'manage-file',
    ]);
  });

  it('give a name in any script a key of its own', () => {
    expect(entityFeatures('顧客, 注文')).toEqual([
      { value: 'manage-u9867-u5ba2', label: 'Manage 顧客' },
      { value: 'manage-u6ce8-u6587', label: 'Manage 注文' },
    ]);
    // A long one is cut at a whole code point, within 60 characters.
    const [long] = entityFeatures('日'.repeat(30));
    expect(long!.value).toBe(`manage-${Array(10).fill('u65e5').join('-')}`);
  });

  it('keep both of two names with the same key, and skip a name with no letter or digit', () => {
    expect(entityFeatures('C++, C#, ---, c').map((option) => option.label)).toEqual(['Manage C++', 'Manage C#', 'Manage c']);
    expect(entityFeatures('C++, C#, ---, c').map((option) => option.value)).toEqual(['manage-c', 'manage-c-2', 'manage-c-3']);
  });

  it('are at most 20, of the first 50 names', () => {
    const names = Array.from({ length: 60 }, (_, index) => `Entity ${index}`).join(', ');
    expect(entityFeatures(names)).toHaveLength(20);
  });
});

describe('suppressed questions', () => {
  it('a feature question with no candidate is moot, and so is the first feature with fewer than two', () => {
    expect(suppressedOnEntry(question('features'), answers({}), [])).toBe(true);
    expect(suppressedOnEntry(question('features'), answers({}), [{ value: 'sign-in', label: 'Sign-in' }])).toBe(false);
    expect(suppressedOnEntry(question('firstFeature'), answers({}), [{ value: 'sign-in', label: 'Sign-in' }])).toBe(true);
  });

  it('visual design only for an API-only product', () => {
    expect(suppressedOnEntry(question('visualStyle'), answers({ platforms: ['api'] }), [])).toBe(true);
    expect(suppressedOnEntry(question('visualStyle'), answers({ platforms: ['api', 'web'] }), [])).toBe(false);
    expect(suppressedOnEntry(question('visualStyle'), answers({}), [])).toBe(false);
  });

  it('the architecture prefill is sure in steps of a tenth, up to 0.9', () => {
    const confidence = (entries: Record<string, string | string[] | boolean>) => prefillOnEntry(question('architecture'), { description: null }, answers(entries), [])!.confidence;
    expect(confidence({})).toBe(0.5);
    expect(confidence({ multiTenant: true, platforms: ['ios', 'api'] })).toBe(0.8);
    expect(confidence({ multiTenant: true, platforms: ['ios', 'api'], compliance: ['gdpr'], scale: 'large' })).toBe(0.9);
  });
});

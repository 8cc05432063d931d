import { describe, expect, it } from 'vitest';
import { hasVisibleCharacter } from '../../../kit-runtime/index.ts';
import { AppError } from '../../errors/app-error.ts';
import { answerFitsQuestion } from './answer-fits-question.ts';
import { questionCatalogue, questionsOfPhase, type AnswerValue, type QuestionDefinition, type QuestionOption } from './flow-catalogue.ts';
import { cascadesOf, featureCandidates, matchedPatterns, namesIn, ontologyOf, prefillOnEntry, suggestionsFor, suppressedOnEntry, type AnswersByKey } from './flow-derivations.ts';
import { flowPhases, type FlowPhase } from './flow-phases.ts';
import { readinessOf } from './flow-readiness.ts';
import type { QuestionWithAnswer } from './flow.repository.ts';
import { answerQuestionInput } from './flow.schema.ts';

/**
 * The catalogue and what the flow derives from answers, as a user meets them: every guess the
 * service offers is an answer it would take, every phase can be completed, and what the answers
 * name (ontology, feature candidates) shows each thing once and never "none" or an invisible name.
 */

const answers = (entries: Record<string, AnswerValue>): AnswersByKey => new Map(Object.entries(entries).map(([key, value]) => [key, { value, confidence: null }]));
const definition = (key: string) => questionCatalogue.find((candidate) => candidate.key === key)!;
const FEATURE_KEYS = new Set(['features', 'firstFeature']);

/** A question as entering its phase puts it on a project (see enterPhase), with its answer, if any. */
function rowOf(question: QuestionDefinition, candidates: QuestionOption[], prefill: QuestionWithAnswer['prefill'] = null, suppressed = false): QuestionWithAnswer {
  return {
    id: `00000000-0000-4000-8000-${String(questionCatalogue.indexOf(question)).padStart(12, '0')}`,
    tenant_id: 't',
    project_id: 'p',
    phase: question.phase,
    key: question.key,
    position: questionCatalogue.indexOf(question),
    text: question.text,
    description: question.description,
    variants: [],
    answer_type: question.answerType,
    options: FEATURE_KEYS.has(question.key) ? candidates : (question.options ?? []),
    bounds: question.bounds ?? null,
    required: question.required,
    weight: question.weight,
    prefill,
    suppressed,
    created_at: new Date(0),
    answer: null,
  };
}
const row = (key: string, candidates: QuestionOption[] = []) => rowOf(definition(key), candidates);

/** Why `value` would be refused as the answer to `question` (the request schema, then the question's rules); null when it is taken. */
function refusalOf(question: QuestionWithAnswer, value: AnswerValue, selectedFeatures?: AnswerValue): string | null {
  const parsed = answerQuestionInput.safeParse({ projectId: '00000000-0000-4000-8000-000000000001', questionId: question.id, answer: { value } });
  if (!parsed.success) return parsed.error.issues.map((issue) => issue.message).join('; ');
  try {
    answerFitsQuestion(question, value);
  } catch (error) {
    if (error instanceof AppError) return error.message;
    throw error;
  }
  // The service also holds the most important feature to the selection (requireSelectedFeature).
  if (question.key === 'firstFeature' && Array.isArray(selectedFeatures) && !selectedFeatures.includes(value as string)) return 'not one of the selected features';
  return null;
}
const refusal = (key: string, value: AnswerValue, candidates: QuestionOption[] = []) => refusalOf(row(key, candidates), value);

/** A small deterministic pseudo-random generator (mulberry32), so a failing answer set can be replayed. */
function randomFrom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

const DESCRIPTIONS = [null, '', '   ', '\u200b\u200d', '\u202e', '\u3164', 'Online booking for small clinics', `  ${'y'.repeat(9_999)}😀`, 'x'.repeat(10_000), 'Short'];
const TEXTS: Record<string, string[]> = {
  problem: ['Small clinics lose bookings after hours.', 'Too short', `${'p'.repeat(119)} and on`, '为小企业管理预约的在线工具', 'x'.repeat(10_000)],
  entities: [
    'customer, order, invoice',
    'clinic; patient\nappointment',
    'Café, Cafe\u0301, CAFÉ, cafe',
    'C++, C#, ---, c',
    '顧客、注文，請求書',
    '\u200fCustomer\u200f, Customer\u200b, Ａｂｃ, abc',
    'İstanbul, istanbul',
    'Øl, Łódź, Æther, straße, İstanbul',
    'none, customer',
    Array.from({ length: 60 }, (_, index) => `Thing ${index}`).join('\n'),
    `${'e'.repeat(99)} tail, ${'e'.repeat(99)}`,
    '★, ☆, ♦, ♣, ♠, ♥, ●, ○, ■, □, ▲, △, ▼, ▽, ◆, ◇, ◎, ※, ✓, ✗, Invoice',
  ],
  integrations: ['Stripe, Salesforce', 'none', 'N/A', 'None.', 'Stripe, none', '\u200fStripe, Stripe', '-'],
  milestones: ['MVP\nBeta\nLaunch'],
  brandColors: ['#0a5, white'],
};

/** One answer to `question` a user could give, from `random`; undefined for a question left unanswered. */
function answerFor(question: QuestionWithAnswer, random: ReturnType<typeof randomFrom>, skipShare: number, selected: AnswerValue | undefined): AnswerValue | undefined {
  if (random.next() < (question.required ? skipShare / 3 : skipShare)) return undefined;
  const values = question.options.map((option) => option.value);
  switch (question.answer_type) {
    case 'text':
      return random.pick(TEXTS[question.key] ?? ['Some text']);
    case 'select':
      if (question.key === 'firstFeature') return Array.isArray(selected) && selected.length > 0 ? random.pick(selected) : undefined;
      return values.length > 0 ? random.pick(values) : undefined;
    case 'multiselect': {
      const exclusive = question.options.filter((option) => option.exclusive).map((option) => option.value);
      if (exclusive.length > 0 && random.next() < 0.25) return [random.pick(exclusive)];
      const chosen = values.filter((value) => !exclusive.includes(value) && random.next() < 0.5);
      const fallback = values.find((value) => !exclusive.includes(value));
      return chosen.length > 0 ? chosen : fallback === undefined ? undefined : [fallback];
    }
    case 'boolean':
      return random.next() < 0.5;
    case 'number':
      return Math.floor(1 + random.next() * 1000);
  }
}

interface Finding {
  seed: number;
  phase: FlowPhase;
  what: string;
}

/** Walks one project through every phase, answering as `seed` says, and collects what a user would find wrong. */
function walkFlow(seed: number): Finding[] {
  const random = randomFrom(seed);
  const description = DESCRIPTIONS[seed % DESCRIPTIONS.length]!;
  // Some projects answer everything, some only what is required, some are forced past phases with gaps.
  const skipShare = [0, 0.5, 0.9][seed % 3]!;
  const given = new Map<string, { value: AnswerValue; confidence: number | null }>();
  const findings: Finding[] = [];
  for (const phase of flowPhases) {
    const note = (what: string) => findings.push({ seed, phase, what });
    const candidates = phase === 'FEATURE_SELECTION' ? featureCandidates(given) : [];
    const rows = questionsOfPhase(phase).map((question) => rowOf(question, candidates, prefillOnEntry(question, { description }, given, candidates), suppressedOnEntry(question, given, candidates)));
    for (const question of rows.filter((candidate) => !candidate.suppressed)) {
      if (question.prefill) {
        const why = refusalOf(question, question.prefill.value);
        if (why) note(`the prefill of "${question.key}" (${JSON.stringify(question.prefill.value).slice(0, 80)}) would be refused: ${why}`);
      }
      if (question.required && ['select', 'multiselect'].includes(question.answer_type) && question.options.length === 0) note(`"${question.key}" is asked and required, with no option to pick`);
    }
    const labels = new Map<string, string>();
    for (const option of candidates) {
      const look = option.label.normalize('NFKC').replace(/\p{Default_Ignorable_Code_Point}/gu, '').toLowerCase().replace(/i\u0307/g, 'i');
      if (labels.has(look)) note(`two feature candidates read alike: "${labels.get(look)}" and "${option.label}"`);
      labels.set(look, option.label);
    }
    for (const question of rows) {
      if (question.suppressed) continue;
      const value = answerFor(question, random, skipShare, given.get('features')?.value);
      if (value === undefined) continue;
      const why = refusalOf(question, value, given.get('features')?.value);
      if (why) {
        note(`the generated answer to "${question.key}" was refused (a fault of this test): ${why}`);
        continue;
      }
      question.answer = { id: 'a', value, confidence: null };
      given.set(question.key, { value, confidence: null });
      for (const cascade of cascadesOf(question.key, value)) {
        const target = rows.find((candidate) => candidate.key === cascade.key && !candidate.suppressed && candidate.answer === null);
        if (!target || !cascade.prefill) continue;
        target.prefill = cascade.prefill;
        const refused = refusalOf(target, cascade.prefill.value, given.get('features')?.value);
        if (refused) note(`answering "${question.key}" raised a prefill on "${target.key}" that would be refused: ${refused}`);
      }
      if (phase === 'DISCOVERY') {
        for (const item of ontologyOf(question, value, 1)) {
          if (!hasVisibleCharacter(item.name) || item.name !== item.name.trim()) note(`the ${item.type} ${JSON.stringify(item.name)} shows nothing or has spaces at an end`);
          if (/^(none|n\/a|na)\.?$/i.test(item.name)) note(`"${item.name}" became an ${item.type}`);
        }
      }
    }
    // A phase whose asked required questions are all answered is ready: no cascade or suppression leaves it stuck.
    const readiness = readinessOf(phase, rows);
    if (rows.every((question) => question.suppressed || !question.required || question.answer !== null) && !readiness.isReady) {
      note(`every asked required question is answered, yet the phase is not ready: ${JSON.stringify(readiness.blockers)}`);
    }
    if (!readiness.isReady && readiness.blockers.length === 0) note('not ready, and no blocker says why');
  }
  // Deterministic: the same answers, read in another order, derive the same.
  const backward: AnswersByKey = new Map([...given].reverse());
  const candidates = featureCandidates(given);
  if (JSON.stringify(featureCandidates(backward)) !== JSON.stringify(candidates)) findings.push({ seed, phase: 'FEATURE_SELECTION', what: 'the candidates depend on the order answers are read in' });
  if (JSON.stringify(matchedPatterns(backward)) !== JSON.stringify(matchedPatterns(given))) findings.push({ seed, phase: 'PLAN_GENERATION', what: 'the patterns depend on the order answers are read in' });
  for (const question of questionCatalogue) {
    if (JSON.stringify(prefillOnEntry(question, { description }, backward, candidates)) !== JSON.stringify(prefillOnEntry(question, { description }, given, candidates))) {
      findings.push({ seed, phase: question.phase, what: `the prefill of "${question.key}" depends on the order answers are read in` });
    }
  }
  return findings;
}

describe('every guess the flow offers is an answer it would take', () => {
  it('every prefill, on entry and raised by another answer, passes the request schema and answerFitsQuestion; every phase can be completed; the ontology and candidates show each thing once, visibly, never "none" (300 answer sets)', () => {
    const findings = Array.from({ length: 300 }, (_, seed) => walkFlow(seed)).flat();
    // One line per kind of finding, with the first seed that shows it.
    const kinds = new Map<string, string>();
    for (const { seed, phase, what } of findings) if (!kinds.has(what)) kinds.set(what, `seed ${seed}, ${phase}: ${what}`);
    expect([...kinds.values()]).toEqual([]);
  });

  it('a description that shows nothing ("\\u200b", a bidirectional control, the Hangul filler) gives no problem prefill', () => {
    for (const description of ['\u200b\u200d', '\u202e', '\u3164', ' \u00ad ']) {
      expect([description, prefillOnEntry(definition('problem'), { description }, answers({}), [])]).toEqual([description, null]);
    }
    expect(prefillOnEntry(definition('problem'), { description: ' Online booking ' }, answers({}), [])?.value).toBe('Online booking');
  });
});

describe('text answers that show nothing', () => {
  it('are refused, as "   " is: a zero-width space, a bidirectional control or the Hangul filler would count the question as answered', () => {
    for (const value of ['\u200b', '\u200b\u200d\u2060', '\u202e', '\u3164', ' \u00ad ', '\u200f\u200e']) {
      expect([JSON.stringify(value), refusal('problem', value)]).toEqual([JSON.stringify(value), 'The answer to "problem" must contain a visible character, not only spaces, zero-width characters or bidirectional controls']);
      expect(refusal('milestones', value)).not.toBeNull();
      expect(refusal('entities', value)).not.toBeNull();
    }
    expect(refusal('problem', '\u200bA real problem\u200b')).toBeNull();
  });
});

describe('integrations answered "none"', () => {
  it('are accepted (the question says how to answer none) and become no integration named "none"', () => {
    expect(definition('integrations').description).toContain('"none"');
    for (const value of ['none', 'None.', 'N/A', 'n/a; none', 'Nothing']) {
      expect([value, refusal('integrations', value)]).toEqual([value, null]);
      expect([value, ontologyOf({ key: 'integrations', options: [] }, value, 1)]).toEqual([value, []]);
    }
    expect(ontologyOf({ key: 'integrations', options: [] }, 'Stripe, none, N/A', 1)).toEqual([{ type: 'integration', name: 'Stripe', confidence: 1 }]);
    // Separators that name nothing are still refused.
    expect(refusal('integrations', ';;') ?? 'accepted').toContain('must name at least one thing');
  });
});

describe('entities answered "none"', () => {
  it('are refused (the product keeps track of something), and "none" among names is no entity and no "Manage none" feature', () => {
    expect(refusal('entities', 'none') ?? 'accepted').toContain('must name at least one thing');
    expect(refusal('entities', 'N/A') ?? 'accepted').toContain('must name at least one thing');
    expect(featureCandidates(answers({ entities: 'none, customer' }))).toEqual([{ value: 'manage-customer', label: 'Manage customer' }]);
    expect(ontologyOf({ key: 'entities', options: [] }, 'none, customer', 1).map((item) => item.name)).toEqual(['customer']);
  });
});

describe('names typed with invisible characters or other scripts\' separators', () => {
  it('are one name however they are typed: a trailing zero-width space or bidirectional mark, full-width letters, a soft hyphen', () => {
    expect(featureCandidates(answers({ entities: 'Customer, Customer\u200b, \u200fCustomer\u200f, cus\u00adtomer, Ａｂｃ, abc' }))).toEqual([
      { value: 'manage-customer', label: 'Manage Customer' },
      { value: 'manage-abc', label: 'Manage Ａｂｃ' },
    ]);
    expect(ontologyOf({ key: 'integrations', options: [] }, '\u200fStripe\u200f, Stripe, \u200b', 1)).toEqual([{ type: 'integration', name: 'Stripe', confidence: 1 }]);
    // The Turkish capital İ lower-cases (in every locale) to "i" and a combining dot: still one city.
    expect(featureCandidates(answers({ entities: 'İstanbul, istanbul, ISTANBUL' }))).toEqual([{ value: 'manage-istanbul', label: 'Manage İstanbul' }]);
  });

  it('an invisible name ("\\u200b", "\\u3164", the braille blank) is no entity', () => {
    expect(namesIn('order, \u200b, \u3164, \u2800, \u200d\u200c')).toEqual(['order']);
  });

  it('Chinese, Japanese and Arabic commas separate names as the ASCII comma does', () => {
    expect(namesIn('顧客、注文，請求書；支払い')).toEqual(['顧客', '注文', '請求書', '支払い']);
    expect(namesIn('عميل، طلب؛ فاتورة')).toEqual(['عميل', 'طلب', 'فاتورة']);
  });

  it('a name cut at 100 characters ends in no space, so it matches the same name typed shorter', () => {
    expect(namesIn(`${'x'.repeat(99)} tail, ${'x'.repeat(99)}`)).toEqual(['x'.repeat(99)]);
    const [goal] = ontologyOf({ key: 'problem', options: [] }, `\u200f${'g'.repeat(119)} more`, 1);
    expect(goal!.name).toBe('g'.repeat(119));
  });
});

describe('feature keys', () => {
  it('spell letters with a stroke or ligature in ASCII, rather than dropping them', () => {
    expect(featureCandidates(answers({ entities: 'Øl, Łódź, Æther, Œuvre, Đorđe, Þing' })).map((option) => option.value)).toEqual([
      'manage-ol', 'manage-lodz', 'manage-aether', 'manage-oeuvre', 'manage-dorde', 'manage-thing',
    ]);
  });

  it('a name with no letter or digit takes none of the 20 "manage" slots', () => {
    const symbols = '★, ☆, ♦, ♣, ♠, ♥, ●, ○, ■, □, ▲, △, ▼, ▽, ◆, ◇, ◎, ※, ✓, ✗';
    expect(featureCandidates(answers({ entities: `${symbols}, Invoice` }))).toEqual([{ value: 'manage-invoice', label: 'Manage Invoice' }]);
  });
});

describe('suggestions', () => {
  it('do not ask a Chinese or Japanese problem statement to say more because it has few characters', () => {
    expect(suggestionsFor('problem', answers({ problem: '为小企业管理预约的在线工具' }))).toEqual([]);
    expect(suggestionsFor('problem', answers({ problem: '小さな診療所の予約を夜間でも受け付ける' }))).toEqual([]);
    // Short is still short, in any script, and invisible characters do not pad it.
    expect(suggestionsFor('problem', answers({ problem: '预约工具' }))).toHaveLength(1);
    expect(suggestionsFor('problem', answers({ problem: `Booking${'\u200b'.repeat(30)}` }))).toHaveLength(1);
  });
});

describe('the catalogue\'s wording', () => {
  it('asks for regulations or standards: PCI DSS and SOC 2, among its options, are no regulations', () => {
    const compliance = definition('compliance');
    expect(compliance.options!.map((option) => option.label)).toEqual(expect.arrayContaining(['PCI DSS', 'SOC 2']));
    expect(compliance.text).toMatch(/standards/);
  });
});

import { hasVisibleCharacter } from '../../../kit-runtime/index.ts';
import { cutBetweenCharacters } from '../../db/storable-text.ts';
import { capabilityOptions, type AnswerValue, type Prefill, type QuestionDefinition, type QuestionOption } from './flow-catalogue.ts';

/**
 * What the flow derives from a project's answers: feature candidates, matched patterns, prefills,
 * which questions are moot, the ontology and suggestions. Pure and deterministic: the same answers
 * always give the same result, so a project's flow can be replayed and tested exactly.
 */

/** A project's answers so far, by question key, with the confidence each was given with. */
export type AnswersByKey = ReadonlyMap<string, { value: AnswerValue; confidence: number | null }>;

export interface OntologyItem {
  type: 'goal' | 'actor' | 'platform' | 'capability' | 'entity' | 'integration' | 'constraint';
  name: string;
  confidence: number;
}

const list = (answers: AnswersByKey, key: string): string[] => {
  const value = answers.get(key)?.value;
  return Array.isArray(value) ? value : [];
};
const labelOf = (options: readonly QuestionOption[] | undefined, value: string) => options?.find((option) => option.value === value)?.label ?? value;

/** Characters that show nothing: zero-width ones, bidirectional marks and controls, the soft hyphen, the Hangul filler… */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
/**
 * Spaces and such characters at either end of a name ("Stripe\u200f" is "Stripe"); but not the
 * variation selectors and tags that end an emoji ("❤️", a subdivision flag), which show in it.
 */
const EDGE = String.raw`(?:(?![\uFE00-\uFE0F\u{E0000}-\u{E0FFF}])[\s\p{Default_Ignorable_Code_Point}])+`;
const EDGES = new RegExp(`^${EDGE}|${EDGE}$`, 'gu');
/**
 * What separates names: commas, semicolons and lines, as typed in any script (the ideographic and
 * full-width comma and semicolon, the Arabic ones, Unicode's line and paragraph separators).
 */
const NAME_SEPARATORS = /[,;\n\r\u2028\u2029\u060c\u061b\u3001\uff0c\uff1b]/;
/** Answers that say there is nothing to name ("none", "N/A"), compared in lower case without a final full stop. */
const NOTHING = new Set(['none', 'none yet', 'n/a', 'n.a', 'na', 'no', 'nope', 'nothing', 'nil', 'null', 'not applicable', 'not yet', '-', '--', '\u2013', '\u2014']);

/**
 * How two spellings of one name compare: compatibility forms folded ("Ａｂｃ" is "abc"), invisible
 * characters dropped, case ignored — the Turkish capital "İ" included, which toLowerCase (the same
 * in every locale) spells "i" and a combining dot, so "İstanbul" and "istanbul" are one name.
 */
export const sameNameKey = (name: string) => name.normalize('NFKC').replace(IGNORABLE, '').toLowerCase().replace(/i\u0307/g, 'i');
const meansNothing = (name: string) => NOTHING.has(sameNameKey(name).replace(/\.+$/, ''));

/** `text` with its runs of space made one, cut to `max` between characters, and no space or invisible character at either end (also after the cut). */
const tidied = (text: string, max: number) => cutBetweenCharacters(text.replace(EDGES, '').replace(/\s+/g, ' '), max).replace(EDGES, '');

/** Every visible part of a name list, tidied and distinct, "none" included. */
function partsOf(text: string): string[] {
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const part of text.normalize('NFC').split(NAME_SEPARATORS)) {
    const name = tidied(part, 100);
    if (!hasVisibleCharacter(name) || seen.has(sameNameKey(name))) continue;
    seen.add(sameNameKey(name));
    parts.push(name);
  }
  return parts;
}

/**
 * Names in a comma-, semicolon- or line-separated text answer: trimmed (of spaces and of
 * zero-width characters and bidirectional marks), in Unicode's composed form (so "é" typed either
 * way is one name), distinct (ignoring case, invisible characters and compatibility forms, so
 * "Ａｂｃ" is "abc"), each at most 100 characters, at most 50. A part that shows nothing ("\u200b")
 * or says there is nothing ("none", "N/A") names nothing.
 */
export function namesIn(text: string): string[] {
  return partsOf(text)
    .filter((name) => !meansNothing(name))
    .slice(0, 50);
}

/** Whether a name list says, and only says, that there is nothing to name ("none", "N/A; -"). */
export function saysNothing(text: string): boolean {
  const parts = partsOf(text);
  return parts.length > 0 && parts.every(meansNothing);
}

/** Latin letters no decomposition takes an accent off (a stroke, a ligature), as ASCII spells them. */
const LETTERS_WITHOUT_DECOMPOSITION: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ł: 'l', þ: 'th', ı: 'i', ħ: 'h', ŧ: 't' };

/**
 * A feature key for a name: ASCII letters and digits in lower case, joined by hyphens. Accents go
 * ("Ünïcödé" is "unicode", not "u-ni-co-de"), a letter with a stroke or a ligature is spelled in
 * ASCII ("Øl" is "ol", "Łódź" is "lodz", "Æther" is "aether"), invisible characters vanish (a soft
 * hyphen splits no word); a name with no such letter or digit ("顧客") is
 * spelled by its code points ("u9867-u5ba2"), so it still gets a key of its own.
 */

export function slug(name: string): string {
  const ascii = name
    .replace(IGNORABLE, '')
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[ßæœøđðłþıħŧ]/g, (letter) => LETTERS_WITHOUT_DECOMPOSITION[letter]!)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '');
  return ascii !== '' ? ascii : codePointKey(name);
}

/** A name's letters and digits spelt by their code points ("顧客" is "u9867-u5ba2"), at most 60 characters: the key of a name with no Latin letter or digit. */
export function codePointKey(name: string): string {
  let key = '';
  for (const char of name) {
    if (!/[\p{L}\p{N}]/u.test(char)) continue;
    const next = `${key === '' ? '' : `${key}-`}u${char.codePointAt(0)!.toString(16)}`;
    if (next.length > 60) break;
    key = next;
  }
  return key;
}

const capabilityFeatures: Record<string, QuestionOption[]> = {
  accounts: [{ value: 'sign-in', label: 'Sign-in and user profiles' }],
  payments: [
    { value: 'checkout', label: 'Checkout and payments' },
    { value: 'invoices', label: 'Invoices and billing history' },
  ],
  messaging: [{ value: 'notifications', label: 'Email and push notifications' }],
  search: [{ value: 'search', label: 'Search with filters' }],
  content: [{ value: 'content-editor', label: 'Content editing and publishing' }],
  scheduling: [{ value: 'bookings', label: 'Calendar and bookings' }],
  reporting: [{ value: 'dashboards', label: 'Dashboards and exports' }],
  files: [{ value: 'file-uploads', label: 'File uploads and previews' }],
  collaboration: [{ value: 'shared-workspaces', label: 'Shared workspaces and comments' }],
  integrations: [{ value: 'integration-hub', label: 'Webhooks and connections to other systems' }],
};

/**
 * The features offered in feature selection: those of each capability chosen in discovery, a
 * mobile app, a public API, organizations for a multi-tenant product, an audit log for regulated
 * data, and one "manage" feature per entity named (the first 20 with a letter or digit: a name
 * with none takes no slot). Capability order, then the rest.
 */
export function featureCandidates(answers: AnswersByKey): QuestionOption[] {
  const candidates = new Map<string, string>();
  const add = (option: QuestionOption) => {
    if (option.value !== '' && !candidates.has(option.value)) candidates.set(option.value, option.label);
  };
  const capabilities = list(answers, 'capabilities');
  for (const { value } of capabilityOptions) if (capabilities.includes(value)) capabilityFeatures[value]!.forEach(add);
  const platforms = list(answers, 'platforms');
  if (platforms.includes('ios') || platforms.includes('android')) add({ value: 'mobile-app', label: 'Mobile app' });
  // Developers as users want an API whatever the other platforms are.
  if (platforms.includes('api') || list(answers, 'audience').includes('developers')) add({ value: 'public-api', label: 'Public API with keys' });
  if (answers.get('multiTenant')?.value === true) add({ value: 'organizations', label: 'Organizations and member roles' });
  if (list(answers, 'compliance').some((rule) => rule !== 'none')) add({ value: 'audit-log', label: 'Audit log' });
  const entities = answers.get('entities')?.value;
  if (typeof entities === 'string') {
    let added = 0;
    for (const name of namesIn(entities)) {
      if (added === 20) break;
      const key = slug(name);
      if (key === '') continue; // no letter or digit at all ("---"): nothing to manage, and no slot taken
      // Two names may share a key ("C++" and "C#"): the later one gets "-2", "-3", … rather than vanish.
      let value = `manage-${key}`;
      for (let suffix = 2; candidates.has(value); suffix += 1) value = `manage-${key}-${suffix}`;
      add({ value, label: `Manage ${name}` });
      added += 1;
    }
  }
  return [...candidates].map(([value, label]) => ({ value, label }));
}

/** The architecture patterns the answers match, by name, in a fixed order. */
export function matchedPatterns(answers: AnswersByKey): string[] {
  const platforms = list(answers, 'platforms');
  const features = list(answers, 'features');
  const checks: Array<[name: string, matches: boolean]> = [
    ['multi-tenant-saas', answers.get('multiTenant')?.value === true],
    ['mobile-backend', platforms.includes('ios') || platforms.includes('android')],
    ['public-api', platforms.includes('api') || list(answers, 'audience').includes('developers')],
    ['payments', features.includes('checkout') || features.includes('invoices')],
    ['event-driven-notifications', features.includes('notifications')],
    ['regulated-data', list(answers, 'compliance').some((rule) => rule !== 'none')],
    ['high-scale', answers.get('scale')?.value === 'large'],
  ];
  return checks.filter(([, matches]) => matches).map(([name]) => name);
}

function architectureFor(patterns: string[]): AnswerValue {
  if (patterns.includes('high-scale') && patterns.length >= 3) return 'microservices';
  return patterns.length >= 2 ? 'modular_monolith' : 'monolith';
}

/** The project's own text a prefill may come from. */
export interface ProjectFacts {
  description: string | null;
}

/**
 * What the service guesses for a question when its phase is entered, from the project and the
 * answers of earlier phases; null when it has no guess.
 */
export function prefillOnEntry(question: QuestionDefinition, project: ProjectFacts, answers: AnswersByKey, candidates: QuestionOption[]): Prefill | null {
  switch (question.key) {
    case 'problem':
      // A description that shows nothing ("\u200b") is no problem statement: it would be refused as the answer.
      return project.description && hasVisibleCharacter(project.description)
        ? { value: cutBetweenCharacters(project.description.trim(), 10_000), confidence: 0.6, source: 'project.description', explanation: "Taken from the project's description" }
        : null;
    case 'features':
      return candidates.length > 0
        ? { value: candidates.map((option) => option.value), confidence: 0.5, source: 'discovery', explanation: 'Every candidate the discovery answers suggest' }
        : null;
    case 'architecture': {
      const patterns = matchedPatterns(answers);
      return {
        value: architectureFor(patterns),
        confidence: Math.min(0.9, 0.5 + 0.1 * patterns.length),
        source: 'patterns',
        explanation: patterns.length > 0 ? `Matched patterns: ${patterns.join(', ')}` : 'No pattern matched; the simplest architecture',
      };
    }
    case 'milestones': {
      const features = list(answers, 'features');
      const first = answers.get('firstFeature')?.value;
      const ordered = typeof first === 'string' && features.includes(first) ? [first, ...features.filter((feature) => feature !== first)] : features;
      if (ordered.length === 0) return null;
      const labels = new Map(featureCandidates(answers).map((option) => [option.value, option.label]));
      return { value: ordered.map((feature) => labels.get(feature) ?? feature).join('\n'), confidence: 0.4, source: 'featureSelection', explanation: 'One milestone per selected feature, the most important first' };
    }
    case 'accessibility':
      return { value: 'wcag_aa', confidence: 0.5, source: 'default', explanation: 'The level most public services are held to' };
    case 'specFormat':
      return { value: 'v2', confidence: 0.5, source: 'default', explanation: 'The current format' };
    case 'includeTestPlan':
      return { value: true, confidence: 0.6, source: 'default', explanation: 'Test cases follow from the selected features' };
    default:
      return null;
  }
}

/** Whether earlier answers make a question moot when its phase is entered. */
export function suppressedOnEntry(question: QuestionDefinition, answers: AnswersByKey, candidates: QuestionOption[]): boolean {
  const platforms = list(answers, 'platforms');
  if (question.phase === 'VISUAL_DISCOVERY') return platforms.length > 0 && platforms.every((platform) => platform === 'api');
  if (question.key === 'firstFeature') return candidates.length < 2;
  // A flow forced past discovery may have no candidate: a feature question with no option to pick is moot.
  if (question.key === 'features') return candidates.length === 0;
  return false;
}

/** A prefill one answer may raise on another question of its phase. */
interface CascadeRule {
  from: string;
  to: string;
  source: string;
  raise: (values: string[]) => Omit<Prefill, 'source'> | null;
}

const cascadeRules: readonly CascadeRule[] = [
  {
    from: 'audience',
    to: 'multiTenant',
    source: 'discovery.audience',
    raise: (values) => (values.includes('businesses') ? { value: true, confidence: 0.6, explanation: 'Business customers usually each want their own space' } : null),
  },
  {
    from: 'capabilities',
    to: 'compliance',
    source: 'discovery.capabilities',
    raise: (values) => (values.includes('payments') ? { value: ['pci'], confidence: 0.7, explanation: 'Taking payments falls under PCI DSS' } : null),
  },
  {
    from: 'features',
    to: 'firstFeature',
    source: 'featureSelection.features',
    raise: (values) => (values.length > 0 ? { value: values[0]!, confidence: 0.5, explanation: 'The first feature selected' } : null),
  },
];

/**
 * What an answer does to the prefills of other questions, by their key: businesses as users
 * suggest a multi-tenant product, payments suggest PCI DSS, a feature selection suggests its first
 * feature as the one that matters most. `prefill: null` withdraws the guess `source` made, should
 * the question still carry it: an answer replaced by one that no longer suggests it.
 */
export function cascadesOf(key: string, value: AnswerValue): Array<{ key: string; source: string; prefill: Prefill | null }> {
  const values = Array.isArray(value) ? value : [];
  return cascadeRules
    .filter((rule) => rule.from === key)
    .map((rule) => {
      const raised = rule.raise(values);
      return { key: rule.to, source: rule.source, prefill: raised && { ...raised, source: rule.source } };
    });
}

/** The ontology items one discovery answer contributes. */
export function ontologyOf(question: Pick<QuestionDefinition, 'key'> & { options: readonly QuestionOption[] }, value: AnswerValue, confidence: number): OntologyItem[] {
  const item = (type: OntologyItem['type']) => (name: string): OntologyItem => ({ type, name, confidence });
  const labels = (values: string[]) => values.map((option) => labelOf(question.options, option));
  switch (question.key) {
    case 'problem':
      return typeof value === 'string' ? [item('goal')(tidied(value, 120))] : [];
    case 'audience':
      return Array.isArray(value) ? labels(value).map(item('actor')) : [];
    case 'platforms':
      return Array.isArray(value) ? labels(value).map(item('platform')) : [];
    case 'capabilities':
      return Array.isArray(value) ? labels(value).map(item('capability')) : [];
    case 'entities':
      return typeof value === 'string' ? namesIn(value).map(item('entity')) : [];
    case 'integrations':
      return typeof value === 'string' ? namesIn(value).map(item('integration')) : [];
    case 'compliance':
      return Array.isArray(value) ? labels(value.filter((rule) => rule !== 'none')).map(item('constraint')) : [];
    default:
      return [];
  }
}

/** The kinds of ontology item a specification needs; coverage is the share of them with at least one item. */
const coveredKinds: ReadonlyArray<OntologyItem['type']> = ['goal', 'actor', 'platform', 'capability', 'entity'];

export function ontologyCoverage(items: readonly OntologyItem[]): number {
  const kinds = new Set(items.map((item) => item.type));
  return Math.round((coveredKinds.filter((kind) => kinds.has(kind)).length / coveredKinds.length) * 1000) / 1000;
}

/**
 * How long a statement reads, in Latin letters: characters, not UTF-16 units (an emoji is one),
 * invisible ones and runs of spaces left out, and a Chinese or Japanese character counted as
 * three (one says about as much as a short word), so "为小企业管理预约的在线工具" is no short answer.
 */
function statementLength(text: string): number {
  let length = 0;
  for (const char of text.replace(IGNORABLE, '').trim().replace(/\s+/g, ' ')) length += /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(char) ? 3 : 1;
  return length;
}

/** Advice on an answer, in the light of the answers so far (this one included). */
export function suggestionsFor(key: string, answers: AnswersByKey): string[] {
  const suggestions: string[] = [];
  const value = answers.get(key)?.value;
  if (key === 'problem' && typeof value === 'string' && statementLength(value) < 20) {
    suggestions.push('Say more about the problem: every later phase builds on this answer.');
  }
  if (key === 'entities' && typeof value === 'string' && namesIn(value).length < 2) {
    suggestions.push('Most products keep track of several kinds of record; name each one the product stores.');
  }
  if ((key === 'capabilities' || key === 'compliance') && list(answers, 'capabilities').includes('payments') && answers.has('compliance') && !list(answers, 'compliance').includes('pci')) {
    suggestions.push('Taking payments usually falls under PCI DSS; consider adding it under compliance.');
  }
  return suggestions;
}

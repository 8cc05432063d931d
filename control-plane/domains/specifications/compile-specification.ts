import type { ProjectPhase } from '../../db/database.ts';
import type { AnswerValue } from '../flow/flow-catalogue.ts';
import { codePointKey, matchedPatterns, namesIn, slug, type AnswersByKey } from '../flow/flow-derivations.ts';
import { featureBlueprints } from './feature-blueprints.ts';

/**
 * Turns what a project's flow says into its specification. Pure and deterministic: the same input
 * always compiles to the same specification (no clock, no AI), so a compile can be repeated and
 * tested exactly. The input is taken when the compile is asked for (see specifications.service.ts).
 */

/** One answer as the compile takes it: its value, and the labels of the options it chose. */
export interface CompileAnswer {
  key: string;
  value: AnswerValue;
  confidence: number | null;
  labels: string[] | null;
}

/** One user story of the project, as the compile takes it (its requirement's content). */
export interface CompileUserStory {
  title: string;
  description: string | null;
  priority: 'low' | 'medium' | 'high' | 'critical';
  acceptanceCriteria: string[];
}

export interface CompileInput {
  project: { id: string; name: string; description: string | null };
  phase: ProjectPhase;
  answers: CompileAnswer[];
  /** Required questions of the phases entered so far that have no answer, by key. */
  unanswered: string[];
  /**
   * The project's user stories, oldest first; absent when it has none (and in inputs stored before
   * stories existed, which compile as they always did).
   */
  userStories?: CompileUserStory[];
}

export interface CompileOptions {
  format: 'v1' | 'v2';
  includeTestPlan: boolean;
  includeTaskGraph: boolean;
  includeRunbook: boolean;
}

export interface Finding {
  code: string;
  message: string;
}

const text = (answers: Map<string, CompileAnswer>, key: string) => {
  const value = answers.get(key)?.value;
  return typeof value === 'string' ? value : null;
};
const labels = (answers: Map<string, CompileAnswer>, key: string) => answers.get(key)?.labels ?? [];
const values = (answers: Map<string, CompileAnswer>, key: string) => {
  const value = answers.get(key)?.value;
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
};

/** Plurals that no rule makes, by the last word of a key; singular words that end in "s" are here too. */
const IRREGULAR_PLURALS: Record<string, string> = {
  person: 'people',
  child: 'children',
  man: 'men',
  woman: 'women',
  mouse: 'mice',
  goose: 'geese',
  foot: 'feet',
  tooth: 'teeth',
  criterion: 'criteria',
  datum: 'data',
  quiz: 'quizzes',
  leaf: 'leaves',
  shelf: 'shelves',
  half: 'halves',
  knife: 'knives',
  life: 'lives',
  wife: 'wives',
  wolf: 'wolves',
  thief: 'thieves',
  alias: 'aliases',
  atlas: 'atlases',
  bias: 'biases',
  canvas: 'canvases',
  gas: 'gases',
  lens: 'lenses',
  news: 'news',
  series: 'series',
  species: 'species',
};
const IRREGULAR_PLURAL_FORMS = new Set(Object.values(IRREGULAR_PLURALS));

/**
 * An English plural for a collection path, of the key's last word: `category` → `categories`,
 * `box` → `boxes`, `user` → `users`, `order-item` → `order-items`, `person` → `people`,
 * `analysis` → `analyses`. A word already plural stays (`users`, `categories`, `people`); an
 * acronym (`acronym`: the name spells it in capitals) takes an "s" (`faq` → `faqs`, `fy` → `fys`,
 * `sms` → `smses`).
 */
export function pluralPath(key: string, acronym = false): string {
  const cut = key.lastIndexOf('-') + 1;
  const word = key.slice(cut);
  const plural = (() => {
    if (acronym) return /(s|x|z|ch|sh)$/.test(word) ? `${word}es` : `${word}s`;
    if (IRREGULAR_PLURALS[word]) return IRREGULAR_PLURALS[word];
    if (IRREGULAR_PLURAL_FORMS.has(word)) return word;
    if (/[a-z]{2}is$/.test(word)) return `${word.slice(0, -2)}es`; // analysis, basis, axis
    if (/[^su]s$/.test(word)) return word; // already plural: users, categories, boxes
    if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
    if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
    return `${word}s`;
  })();
  return `${key.slice(0, cut)}${plural}`;
}

/**
 * An entity's collection path, without its slash: its key in the plural. A key spelt by code
 * points is no English word and stays as it is; a name whose last word is in capitals ("FAQ",
 * "FY", but not "USERS") is an acronym.
 */
function collectionOf(name: string, key: string): string {
  if (key === codePointKey(name)) return key;
  const lastWord = name.match(/[\p{L}\p{N}]+(?=[^\p{L}\p{N}]*$)/u)?.[0] ?? '';
  const acronym = lastWord.length >= 2 && /^\p{Lu}+$/u.test(lastWord) && !(lastWord.length >= 4 && lastWord.endsWith('S'));
  return pluralPath(key, acronym);
}

function entitiesOf(answers: Map<string, CompileAnswer>) {
  const multiTenant = answers.get('multiTenant')?.value === true;
  const usedKeys = new Set<string>();
  const usedPaths = new Set<string>();
  return namesIn(text(answers, 'entities') ?? '').flatMap((name) => {
    const base = slug(name);
    if (base === '') return [];
    // Two names may share a key ("C++" and "C#") or a plural ("User" and "Users"): the later one
    // gets "-2", "-3", … (as its "manage" feature does) rather than vanish or share endpoints.
    let key = base;
    for (let suffix = 2; usedKeys.has(key); suffix += 1) key = `${base}-${suffix}`;
    const plural = `/${collectionOf(name, base)}`;
    let path = key === base ? plural : `${plural}${key.slice(base.length)}`;
    for (let suffix = 2; usedPaths.has(path); suffix += 1) path = `${plural}-${suffix}`;
    usedKeys.add(key);
    usedPaths.add(path);
    return [
      {
        name,
        key,
        path,
        fields: [
          { name: 'id', type: 'uuid', required: true },
          ...(multiTenant ? [{ name: 'tenantId', type: 'uuid', required: true }] : []),
          { name: 'createdAt', type: 'datetime', required: true },
          { name: 'updatedAt', type: 'datetime', required: true },
        ],
        operations: ['list', 'get', 'create', 'update', 'delete'],
      },
    ];
  });
}

/** Compiles the specification and its validation (errors fail it; warnings only inform). */
export function compileSpecification(input: CompileInput, options: CompileOptions, version: number) {
  const answers = new Map(input.answers.map((answer) => [answer.key, answer]));
  const byKey: AnswersByKey = new Map(input.answers.map((answer) => [answer.key, { value: answer.value, confidence: answer.confidence }]));
  const entities = entitiesOf(answers);
  const selected = values(answers, 'features');
  const featureNames = new Map(selected.map((feature, index) => [feature, labels(answers, 'features')[index] ?? feature]));
  const first = text(answers, 'firstFeature');
  const ordered = first && selected.includes(first) ? [first, ...selected.filter((feature) => feature !== first)] : selected;

  const endpoints = [
    ...entities.flatMap((entity) => [
      { method: 'GET', path: entity.path, summary: `List ${entity.name}`, source: entity.name },
      { method: 'POST', path: entity.path, summary: `Create ${entity.name}`, source: entity.name },
      { method: 'GET', path: `${entity.path}/{id}`, summary: `Get one ${entity.name}`, source: entity.name },
      { method: 'PATCH', path: `${entity.path}/{id}`, summary: `Change ${entity.name}`, source: entity.name },
      { method: 'DELETE', path: `${entity.path}/{id}`, summary: `Delete ${entity.name}`, source: entity.name },
    ]),
    ...ordered.flatMap((feature) => (featureBlueprints[feature]?.endpoints ?? []).map((endpoint) => ({ ...endpoint, source: featureNames.get(feature)! }))),
  ].filter((endpoint, index, all) => all.findIndex((other) => other.method === endpoint.method && other.path === endpoint.path) === index);

  const workflows = ordered.map((feature) => {
    const name = featureNames.get(feature)!;
    const entity = feature.startsWith('manage-') ? name.replace(/^Manage /, '') : null;
    const steps = featureBlueprints[feature]?.workflow ?? (entity ? [`Open the list of ${entity}`, `Create or edit one`, 'Save it', 'See it in the list'] : [`Use ${name}`]);
    return { name, feature, steps };
  });

  // The most important feature: the firstFeature answer when it is selected, else the only one selected.
  const mostImportant = first && selected.includes(first) ? first : selected.length === 1 ? selected[0] : null;
  const functional = ordered.map((feature, index) => ({
    id: `FR-${String(index + 1).padStart(3, '0')}`,
    kind: 'functional' as const,
    title: featureNames.get(feature)!,
    description: describeFeature(feature, featureNames.get(feature)!),
    priority: feature === mostImportant ? ('must' as const) : ('should' as const),
    source: `features.${feature}`,
  }));
  const constraints = [
    ...labels(answers, 'compliance').filter((label) => label !== 'None').map((label) => ({ title: `Complies with ${label}`, source: 'compliance' })),
    // "No formal level" asks for nothing: no requirement to hold the product to, nor a test of it.
    ...labels(answers, 'accessibility')
      .filter((_label, index) => values(answers, 'accessibility')[index] !== 'basic')
      .map((label) => ({ title: `Accessibility: ${label}`, source: 'accessibility' })),
    ...labels(answers, 'scale').map((label) => ({ title: `Serves ${label.toLowerCase()} users in its first year`, source: 'scale' })),
  ];
  const nonFunctional = constraints.map((constraint, index) => ({
    id: `NFR-${String(index + 1).padStart(3, '0')}`,
    kind: 'non-functional' as const,
    title: constraint.title,
    description: `${constraint.title}.`,
    priority: 'must' as const,
    source: constraint.source,
  }));
  const requirements = [...functional, ...storyRequirementsOf(input.userStories ?? []), ...nonFunctional];

  const testCases = options.includeTestPlan
    ? requirements.map((requirement, index) => ({
        id: `TC-${String(index + 1).padStart(3, '0')}`,
        requirementId: requirement.id,
        title: `Verify: ${requirement.title}`,
        expected: expectedOf(requirement),
      }))
    : [];

  const platforms = labels(answers, 'platforms');
  const apiOnly = values(answers, 'platforms').length > 0 && values(answers, 'platforms').every((platform) => platform === 'api');
  const milestones = namesIn((text(answers, 'milestones') ?? '').replace(/\r/g, ''));

  const spec = {
    metadata: {
      title: input.project.name,
      projectId: input.project.id,
      version: String(version),
      format: options.format,
      compiledFromPhase: input.phase,
      generator: 'specwright-deterministic/1',
    },
    overview: {
      name: input.project.name,
      description: input.project.description,
      problem: text(answers, 'problem'),
      audience: labels(answers, 'audience'),
      platforms,
      capabilities: labels(answers, 'capabilities'),
      integrations: namesIn(text(answers, 'integrations') ?? ''),
    },
    entities: entities.map(({ key: _key, ...entity }) => entity),
    endpoints,
    workflows,
    requirements,
    testCases,
    architecture: {
      style: text(answers, 'architecture'),
      patterns: matchedPatterns(byKey),
      multiTenant: answers.get('multiTenant')?.value === true,
      platforms,
      timeline: labels(answers, 'timeline')[0] ?? null,
      teamSize: typeof answers.get('teamSize')?.value === 'number' ? (answers.get('teamSize')!.value as number) : null,
      releaseStrategy: labels(answers, 'releaseStrategy')[0] ?? null,
      milestones,
    },
    designSystem: apiOnly
      ? null
      : { visualStyle: labels(answers, 'visualStyle')[0] ?? null, brandColors: text(answers, 'brandColors'), accessibility: labels(answers, 'accessibility')[0] ?? null },
    ...(options.includeTaskGraph ? { taskGraph: taskGraphOf(entities, [...ordered.map((feature) => featureNames.get(feature)!), ...(input.userStories ?? []).map((story) => story.title)]) } : {}),
    ...(options.includeRunbook ? { runbook: runbookOf(text(answers, 'releaseStrategy')) } : {}),
  };

  return { spec, validation: validateSpecification(spec, input) };
}

/** A story's priority in the requirements' words (MoSCoW): critical and high are musts, low a could. */
const STORY_PRIORITIES = { critical: 'must', high: 'must', medium: 'should', low: 'could' } as const;

/**
 * Each user story as a functional requirement, after the features' (US-001, … in the stories'
 * order), carrying its acceptance criteria; a story without a description is described by its title.
 */
function storyRequirementsOf(stories: CompileUserStory[]) {
  return stories.map((story, index) => ({
    id: `US-${String(index + 1).padStart(3, '0')}`,
    kind: 'functional' as const,
    title: story.title,
    description: story.description || story.title,
    priority: STORY_PRIORITIES[story.priority],
    source: 'user-story',
    acceptanceCriteria: story.acceptanceCriteria,
  }));
}

/** What a test case of the requirement expects: its acceptance criteria, when it states some. */
function expectedOf(requirement: { kind: string; title: string; acceptanceCriteria?: string[] }): string {
  if (requirement.acceptanceCriteria && requirement.acceptanceCriteria.length > 0) return requirement.acceptanceCriteria.join('; ');
  return requirement.kind === 'functional' ? `${requirement.title} works end to end` : `${requirement.title}, shown by a check or an audit`;
}

/**
 * A specification's validation, whoever wrote it (this compiler or the agents): errors — no stated
 * problem, no entity, no functional requirement (a selected feature's or a user story's: a project
 * that states what it must do in stories alone has requirements) — fail it; warnings about the input
 * it came from only inform.
 */
export function validateSpecification(
  spec: { overview: { problem: string | null }; entities: unknown[]; requirements: Array<{ kind: string }> },
  input: CompileInput,
): { passed: boolean; errors: Finding[]; warnings: Finding[] } {
  const errors: Finding[] = [];
  if (!spec.overview.problem) errors.push({ code: 'no_problem', message: 'The problem is not stated: answer "problem" in discovery' });
  if (spec.entities.length === 0) errors.push({ code: 'no_entities', message: 'No entity is named: answer "entities" in discovery' });
  if (!spec.requirements.some((requirement) => requirement.kind === 'functional')) errors.push({ code: 'no_features', message: 'No feature is selected: answer "features" in feature selection' });
  const warnings: Finding[] = [];
  if (input.phase !== 'SPECIFICATION') warnings.push({ code: 'flow_unfinished', message: `Compiled in phase ${input.phase}: the answers of the phases after it are missing` });
  if (input.unanswered.length > 0) warnings.push({ code: 'unanswered_questions', message: `Required questions without an answer: ${input.unanswered.join(', ')}` });
  const unsure = input.answers.filter((answer) => answer.confidence !== null && answer.confidence < 0.5).map((answer) => answer.key);
  if (unsure.length > 0) warnings.push({ code: 'low_confidence_answers', message: `Answers given with confidence below 0.5: ${unsure.join(', ')}` });
  return { passed: errors.length === 0, errors, warnings };
}

/**
 * What a functional requirement says of its feature: a "manage" feature is its entity's list,
 * create, change and delete ("Manage SKU" is not "the product offers manage sku"); another reads
 * from its label, lower-cased only where that keeps an acronym ("Public API with keys").
 */
function describeFeature(feature: string, label: string): string {
  if (feature.startsWith('manage-') && label.startsWith('Manage ')) return `Users can list, create, change and delete ${label.slice('Manage '.length)}.`;
  const firstWord = label.split(' ')[0] ?? '';
  const lowered = /^\p{Lu}\p{Ll}*$/u.test(firstWord.split('-')[0] ?? '') ? `${label[0]!.toLowerCase()}${label.slice(1)}` : label;
  return `The product offers ${lowered}.`;
}

/** A task per entity to model, one per thing to build (each selected feature, then each user story) on the models, and the release after them. */
function taskGraphOf(entities: Array<{ name: string; key: string }>, builds: string[]) {
  const modelTasks = entities.map((entity, index) => ({ id: `T${index + 1}`, title: `Model ${entity.name}`, dependsOn: [] as string[] }));
  const modelIds = modelTasks.map((task) => task.id);
  const featureTasks = builds.map((name, index) => ({ id: `T${modelTasks.length + index + 1}`, title: `Build ${name}`, dependsOn: modelIds }));
  // The release waits for everything built, or for the models when nothing is to be built.
  const release = { id: `T${modelTasks.length + featureTasks.length + 1}`, title: 'Release', dependsOn: featureTasks.length > 0 ? featureTasks.map((task) => task.id) : modelIds };
  return { tasks: [...modelTasks, ...featureTasks, release] };
}

function runbookOf(strategy: string | null) {
  const steps: Record<string, string[]> = {
    all_at_once: ['Freeze changes', 'Back up the database', 'Deploy everything', 'Run the smoke tests', 'Announce the release'],
    phased: ['Deploy behind feature flags', 'Enable for a first group', 'Watch errors and load', 'Enable for everyone', 'Remove the flags'],
    beta_first: ['Invite beta users', 'Deploy to the beta', 'Collect feedback', 'Fix what the beta found', 'Release to everyone'],
  };
  return { strategy, steps: steps[strategy ?? ''] ?? ['Deploy', 'Run the smoke tests', 'Announce the release'] };
}

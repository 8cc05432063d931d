import type { ProjectPhase } from '../../db/database.ts';
import type { AnswerValue } from '../flow/flow-catalogue.ts';
import { matchedPatterns, namesIn, slug, type AnswersByKey } from '../flow/flow-derivations.ts';
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

export interface CompileInput {
  project: { id: string; name: string; description: string | null };
  phase: ProjectPhase;
  answers: CompileAnswer[];
  /** Required questions of the phases entered so far that have no answer, by key. */
  unanswered: string[];
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

/** An English plural for a collection path: `category` → `categories`, `box` → `boxes`, `user` → `users`. */
export function pluralPath(key: string): string {
  if (/[^aeiou]y$/.test(key)) return `${key.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(key)) return `${key}es`;
  return `${key}s`;
}

function entitiesOf(answers: Map<string, CompileAnswer>) {
  const multiTenant = answers.get('multiTenant')?.value === true;
  const used = new Set<string>();
  return namesIn(text(answers, 'entities') ?? '').flatMap((name) => {
    const key = slug(name);
    if (key === '' || used.has(key)) return [];
    used.add(key);
    return [
      {
        name,
        key,
        path: `/${pluralPath(key)}`,
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

  const functional = ordered.map((feature, index) => ({
    id: `FR-${String(index + 1).padStart(3, '0')}`,
    kind: 'functional' as const,
    title: featureNames.get(feature)!,
    description: `The product offers ${featureNames.get(feature)!.toLowerCase()}.`,
    priority: index === 0 && first ? ('must' as const) : ('should' as const),
    source: `features.${feature}`,
  }));
  const constraints = [
    ...labels(answers, 'compliance').filter((label) => label !== 'None').map((label) => ({ title: `Complies with ${label}`, source: 'compliance' })),
    ...labels(answers, 'accessibility').map((label) => ({ title: `Accessibility: ${label}`, source: 'accessibility' })),
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
  const requirements = [...functional, ...nonFunctional];

  const testPlan = options.includeTestPlan || answers.get('includeTestPlan')?.value === true;
  const testCases = testPlan
    ? requirements.map((requirement, index) => ({
        id: `TC-${String(index + 1).padStart(3, '0')}`,
        requirementId: requirement.id,
        title: `Verify: ${requirement.title}`,
        expected: requirement.kind === 'functional' ? `${requirement.title} works end to end` : `${requirement.title}, shown by a check or an audit`,
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
    ...(options.includeTaskGraph ? { taskGraph: taskGraphOf(entities, ordered, featureNames) } : {}),
    ...(options.includeRunbook ? { runbook: runbookOf(text(answers, 'releaseStrategy')) } : {}),
  };

  const errors: Finding[] = [];
  if (!spec.overview.problem) errors.push({ code: 'no_problem', message: 'The problem is not stated: answer "problem" in discovery' });
  if (entities.length === 0) errors.push({ code: 'no_entities', message: 'No entity is named: answer "entities" in discovery' });
  if (functional.length === 0) errors.push({ code: 'no_features', message: 'No feature is selected: answer "features" in feature selection' });
  const warnings: Finding[] = [];
  if (input.phase !== 'SPECIFICATION') warnings.push({ code: 'flow_unfinished', message: `Compiled in phase ${input.phase}: the answers of the phases after it are missing` });
  if (input.unanswered.length > 0) warnings.push({ code: 'unanswered_questions', message: `Required questions without an answer: ${input.unanswered.join(', ')}` });
  const unsure = input.answers.filter((answer) => answer.confidence !== null && answer.confidence < 0.5).map((answer) => answer.key);
  if (unsure.length > 0) warnings.push({ code: 'low_confidence_answers', message: `Answers given with confidence below 0.5: ${unsure.join(', ')}` });

  return { spec, validation: { passed: errors.length === 0, errors, warnings } };
}

function taskGraphOf(entities: Array<{ name: string; key: string }>, features: string[], names: Map<string, string>) {
  const modelTasks = entities.map((entity, index) => ({ id: `T${index + 1}`, title: `Model ${entity.name}`, dependsOn: [] as string[] }));
  const modelIds = modelTasks.map((task) => task.id);
  const featureTasks = features.map((feature, index) => ({ id: `T${modelTasks.length + index + 1}`, title: `Build ${names.get(feature)}`, dependsOn: modelIds }));
  const release = { id: `T${modelTasks.length + featureTasks.length + 1}`, title: 'Release', dependsOn: featureTasks.map((task) => task.id) };
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

import { describe, expect, it } from 'vitest';
import { questionCatalogue, type AnswerValue } from '../flow/flow-catalogue.ts';
import { featureCandidates, namesIn, slug } from '../flow/flow-derivations.ts';
import { compileSpecification, type CompileAnswer, type CompileInput, type CompileOptions } from './compile-specification.ts';
import { specificationOutput } from './specifications.schema.ts';

/**
 * What the compiler makes of a flow, read as a user of the specification reads it. Inputs are
 * built the way specifications.service.ts (compileInputOf) builds them: each answer with the labels
 * of the options it chose, the feature options being the flow's feature candidates.
 */

const PROJECT = { id: '0b0e7c39-4a9f-4c1e-9d3a-2f6f2f0a1b2c', name: 'Clinic bookings', description: null };
const ALL: CompileOptions = { format: 'v2', includeTestPlan: true, includeTaskGraph: true, includeRunbook: true };

/** A flow's answers, in the order given, as compileInputOf hands them to the compiler. */
function flow(answers: Array<[key: string, value: AnswerValue]>, confidence = 0.9): CompileInput {
  const byKey = new Map<string, { value: AnswerValue; confidence: number | null }>();
  const compiled: CompileAnswer[] = [];
  for (const [key, value] of answers) {
    const question = questionCatalogue.find((candidate) => candidate.key === key)!;
    const options = key === 'features' || key === 'firstFeature' ? featureCandidates(byKey) : (question.options ?? []);
    const chosen = Array.isArray(value) ? value : typeof value === 'string' && question.answerType === 'select' ? [value] : null;
    const labels = chosen && chosen.map((choice) => options.find((option) => option.value === choice)?.label ?? choice);
    byKey.set(key, { value, confidence });
    compiled.push({ key, value, confidence, labels });
  }
  return { project: PROJECT, phase: 'SPECIFICATION', answers: compiled, unanswered: [] };
}

const compile = (input: CompileInput, options: CompileOptions = ALL) => compileSpecification(input, options, 1);
const pathsOf = (entities: string) => compile(flow([['entities', entities]])).spec.entities.map((entity) => [entity.name, entity.path]);

describe('entities', () => {
  it('keeps two names that share a key ("C++" and "C#") as two entities, each with its own endpoints, as the flow offers a "manage" feature for each', () => {
    const input = flow([
      ['problem', 'Teach programming languages'],
      ['entities', 'C++, C#, lesson'],
      ['features', ['manage-c', 'manage-c-2']],
    ]);
    const { spec } = compile(input);
    expect(spec.entities.map((entity) => entity.name)).toEqual(['C++', 'C#', 'lesson']);
    const paths = spec.entities.map((entity) => entity.path);
    expect(new Set(paths).size).toBe(3);
    for (const entity of spec.entities) {
      expect(spec.endpoints.filter((endpoint) => endpoint.source === entity.name).map((endpoint) => `${endpoint.method} ${endpoint.path}`)).toEqual([
        `GET ${entity.path}`,
        `POST ${entity.path}`,
        `GET ${entity.path}/{id}`,
        `PATCH ${entity.path}/{id}`,
        `DELETE ${entity.path}/{id}`,
      ]);
    }
    // The workflow of "Manage C#" is about an entity the specification has.
    expect(spec.workflows.map((workflow) => workflow.name)).toEqual(['Manage C++', 'Manage C#']);
  });

  it('names each collection in the plural English gives it, once: typed plurals, irregular plurals and acronyms included, a name in another script as its key', () => {
    const expected: Array<[name: string, path: string]> = [
      ['category', '/categories'],
      ['box', '/boxes'],
      ['church', '/churches'],
      ['status', '/statuses'],
      ['day', '/days'],
      ['order item', '/order-items'],
      // Typed in the plural already: not pluralised again.
      ['Users', '/users'],
      ['Categories', '/categories'],
      ['Boxes', '/boxes'],
      ['people', '/people'],
      // Irregular plurals.
      ['person', '/people'],
      ['sales person', '/sales-people'],
      ['analysis', '/analyses'],
      ['quiz', '/quizzes'],
      ['alias', '/aliases'],
      // Acronyms take an "s".
      ['FAQ', '/faqs'],
      ['FY', '/fys'],
      ['API key', '/api-keys'],
      // No English word to pluralise: the key as it is.
      ['顧客', '/u9867-u5ba2'],
    ];
    // Each named alone, as the only entity of a flow.
    expect(expected.map(([name]) => pathsOf(name)[0])).toEqual(expected);
  });

  it('gives two names of one collection ("User" and "Users") two paths, so neither loses its endpoints', () => {
    const { spec } = compile(flow([['entities', 'User, Users']]));
    expect(spec.entities.map((entity) => entity.path)).toEqual(['/users', '/users-2']);
    expect(spec.endpoints.filter((endpoint) => endpoint.source === 'Users')).toHaveLength(5);
  });
});

describe('requirements', () => {
  const features: Array<[string, AnswerValue]> = [
    ['problem', 'Clinics lose bookings'],
    ['capabilities', ['accounts', 'scheduling', 'messaging']],
    ['entities', 'patient'],
  ];

  it('makes the most important feature, and only it, a must: not the first selected when the one named is not selected', () => {
    const chosen = compile(flow([...features, ['features', ['sign-in', 'bookings', 'manage-patient']], ['firstFeature', 'bookings']])).spec;
    expect(chosen.requirements.map((requirement) => [requirement.id, requirement.source, requirement.priority])).toEqual([
      ['FR-001', 'features.bookings', 'must'],
      ['FR-002', 'features.sign-in', 'should'],
      ['FR-003', 'features.manage-patient', 'should'],
    ]);
    expect(chosen.workflows[0]!.feature).toBe('bookings');
    // The feature named most important was not selected (the selection changed after it was named).
    const { spec } = compile(flow([...features, ['features', ['sign-in', 'notifications']], ['firstFeature', 'bookings']]));
    expect(spec.requirements.filter((requirement) => requirement.kind === 'functional').map((requirement) => [requirement.title, requirement.priority])).toEqual([
      ['Sign-in and user profiles', 'should'],
      ['Email and push notifications', 'should'],
    ]);
  });

  it('makes the only selected feature the must (the flow does not ask which matters most of one)', () => {
    const { spec } = compile(flow([...features, ['features', ['bookings']]]));
    expect(spec.requirements[0]).toMatchObject({ id: 'FR-001', title: 'Calendar and bookings', priority: 'must' });
  });

  it('holds the product to no accessibility requirement, nor tests one, when the answer is "No formal level"', () => {
    const { spec } = compile(flow([...features, ['features', ['bookings']], ['accessibility', 'basic']]));
    expect(spec.requirements.filter((requirement) => requirement.source === 'accessibility')).toEqual([]);
    expect(spec.testCases.map((test) => test.title)).not.toContain('Verify: Accessibility: No formal level');
    // The design system still records the answer.
    expect(spec.designSystem?.accessibility).toBe('No formal level');
  });

  it('describes a feature in a sentence that reads: an entity keeps its name, an acronym its capitals', () => {
    const { spec } = compile(
      flow([
        ['problem', 'Sell stock'],
        ['audience', ['developers']],
        ['entities', 'SKU'],
        ['features', ['public-api', 'manage-sku']],
      ]),
    );
    expect(spec.requirements.map((requirement) => requirement.description)).toEqual(['The product offers public API with keys.', 'Users can list, create, change and delete SKU.']);
  });
});

describe('task graph', () => {
  it('has the release wait for the models when no feature is selected', () => {
    const { spec } = compile(flow([['entities', 'patient, appointment']]));
    expect(spec.taskGraph!.tasks).toEqual([
      { id: 'T1', title: 'Model patient', dependsOn: [] },
      { id: 'T2', title: 'Model appointment', dependsOn: [] },
      { id: 'T3', title: 'Release', dependsOn: ['T1', 'T2'] },
    ]);
  });
});

/** A small deterministic pseudo-random sequence, so a failing flow can be replayed. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

const HOSTILE_NAMES = [
  'customer', 'Order', 'Orders', 'category', 'Categories', 'box', 'Boxes', 'church', 'Users', 'User', 'person', 'booking', 'api key', 'Invoice',
  'notification', 'page', 'file', 'webhook', 'device', 'audit event', 'organization', 'workspace', 'report', 'Me', '顧客', 'C++', 'C#', 'c', 'FAQ',
  'FY', 'SMS', 'analysis', 'status', 'Ünïcödé', 'Łódź', 'Øl', '---', '🚀', 'İstanbul', 'ＡＢＣ', 'order item', 'x'.repeat(120),
];

/** A realistic or hostile flow, answered the way the flow offers its questions. */
function randomFlow(seed: number): CompileInput {
  const next = random(seed);
  const pick = <T,>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const some = (key: string, except: string[] = []) => (questionCatalogue.find((question) => question.key === key)!.options ?? []).filter((option) => !except.includes(option.value) && next() < 0.4).map((option) => option.value);
  const answers: Array<[string, AnswerValue]> = [];
  const add = (key: string, value: AnswerValue) => next() < 0.9 && answers.push([key, value]);
  add('problem', 'Small clinics lose bookings after hours.');
  add('audience', some('audience'));
  const apiOnly = next() < 0.2;
  add('platforms', apiOnly ? ['api'] : some('platforms', ['api']));
  add('capabilities', some('capabilities'));
  const count = seed % 5 === 0 ? 50 : Math.floor(next() * 10);
  add('entities', Array.from({ length: count }, (_, index) => (seed % 5 === 0 ? `${pick(HOSTILE_NAMES)} ${index}` : pick(HOSTILE_NAMES))).join(pick([', ', '; ', '\n', '、'])));
  add('multiTenant', next() < 0.5);
  add('integrations', pick(['Stripe, Salesforce', 'none', '']));
  add('compliance', next() < 0.3 ? ['none'] : some('compliance', ['none']));
  add('scale', pick(['small', 'medium', 'large']));
  const byKey = new Map(answers.map(([key, value]) => [key, { value, confidence: null }]));
  const candidates = featureCandidates(byKey).map((option) => option.value);
  const selected = candidates.filter(() => next() < 0.6);
  if (candidates.length > 0) add('features', selected);
  if (candidates.length >= 2) add('firstFeature', next() < 0.8 && selected.length > 0 ? pick(selected) : pick(candidates));
  add('architecture', 'modular_monolith');
  add('timeline', 'quarter');
  add('teamSize', 4);
  add('milestones', 'First release\r\nSecond release');
  add('releaseStrategy', pick(['all_at_once', 'phased', 'beta_first']));
  if (!apiOnly) {
    add('visualStyle', 'minimal');
    add('accessibility', pick(['wcag_aa', 'wcag_aaa', 'basic']));
  }
  add('specFormat', 'v2');
  add('includeTestPlan', next() < 0.5);
  return flow(answers, next() < 0.2 ? 0.3 : 0.9);
}

describe('any flow', () => {
  const inputs = [
    ...Array.from({ length: 400 }, (_, seed) => randomFlow(seed + 1)),
    { project: PROJECT, phase: 'DISCOVERY' as const, answers: [], unanswered: ['problem', 'audience'] },
  ];

  it('compiles into a specification the GET answer can carry, with unique endpoints of its own entities and selected features, every named entity at its own path, the same whatever the order of the answers', () => {
    for (const input of inputs) {
      const { spec, validation } = compile(input);
      const where = JSON.stringify(input.answers.find((answer) => answer.key === 'entities')?.value ?? null);
      expect(specificationOutput.shape.spec.safeParse(spec).error, where).toBeUndefined();
      expect(specificationOutput.shape.validation.safeParse(validation).error, where).toBeUndefined();

      const endpointKeys = spec.endpoints.map((endpoint) => `${endpoint.method} ${endpoint.path}`);
      expect(new Set(endpointKeys).size, where).toBe(endpointKeys.length);
      const features = new Set(spec.workflows.map((workflow) => workflow.name));
      for (const endpoint of spec.endpoints) {
        expect(endpoint.path, where).toMatch(/^(\/[a-z0-9]+(-[a-z0-9]+)*|\/\{id\})+$/);
        expect(spec.entities.some((entity) => entity.name === endpoint.source) || features.has(endpoint.source), `${where}: ${endpoint.source}`).toBe(true);
      }

      const entitiesAnswer = input.answers.find((answer) => answer.key === 'entities')?.value;
      const named = namesIn(typeof entitiesAnswer === 'string' ? entitiesAnswer : '').filter((name) => slug(name) !== '');
      expect(spec.entities.map((entity) => entity.name), where).toEqual(named);
      expect(new Set(spec.entities.map((entity) => entity.path)).size, where).toBe(named.length);
      for (const entity of spec.entities) {
        expect(endpointKeys, where).toEqual(expect.arrayContaining([`GET ${entity.path}`, `POST ${entity.path}`, `GET ${entity.path}/{id}`, `PATCH ${entity.path}/{id}`, `DELETE ${entity.path}/{id}`]));
      }

      const functional = spec.requirements.filter((requirement) => requirement.kind === 'functional');
      const nonFunctional = spec.requirements.filter((requirement) => requirement.kind === 'non-functional');
      expect(functional.map((requirement) => requirement.id)).toEqual(functional.map((_, index) => `FR-${String(index + 1).padStart(3, '0')}`));
      expect(nonFunctional.map((requirement) => requirement.id)).toEqual(nonFunctional.map((_, index) => `NFR-${String(index + 1).padStart(3, '0')}`));
      expect(functional.filter((requirement) => requirement.priority === 'must').length).toBeLessThanOrEqual(1);
      expect(spec.testCases.map((test) => test.id)).toEqual(spec.testCases.map((_, index) => `TC-${String(index + 1).padStart(3, '0')}`));
      for (const test of spec.testCases) expect(spec.requirements.map((requirement) => requirement.id)).toContain(test.requirementId);

      const tasks = spec.taskGraph!.tasks;
      const position = new Map(tasks.map((task, index) => [task.id, index]));
      expect(position.size).toBe(tasks.length);
      // Every dependency names an earlier task: the graph has no cycle.
      for (const [index, task] of tasks.entries()) for (const dependency of task.dependsOn) expect(position.get(dependency)).toBeLessThan(index);
      // Everything is on the way to the release.
      const needed = new Set(tasks.flatMap((task) => task.dependsOn));
      expect(tasks.filter((task) => task.title !== 'Release' && !needed.has(task.id)), where).toEqual([]);

      // The same answers in another order, and their fields in another order: the same specification.
      const reordered = { ...input, answers: [...input.answers].reverse().map((answer) => Object.fromEntries(Object.entries(answer).reverse()) as unknown as CompileAnswer) };
      expect(compile(structuredClone(reordered)).spec).toEqual(spec);
      expect(JSON.stringify(compile(structuredClone(input)))).toBe(JSON.stringify({ spec, validation }));
    }
  });
});

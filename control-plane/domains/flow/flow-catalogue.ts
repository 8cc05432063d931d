import type { FlowPhase } from './flow-phases.ts';

export type AnswerType = 'text' | 'select' | 'multiselect' | 'boolean' | 'number';
export type AnswerValue = string | string[] | boolean | number;
export interface QuestionOption {
  value: string;
  label: string;
  /** A multiselect answer naming this option names no other ("None", "API only"). */
  exclusive?: true;
}

/** What the service guesses before anyone answers: the value, how sure it is, and why. */
export interface Prefill {
  value: AnswerValue;
  confidence: number;
  source: string;
  explanation: string;
}

/**
 * One question of the catalogue. `key` names it within a project (answers are read by key);
 * `options` of a feature question are filled from the project when its phase is entered.
 */
export interface QuestionDefinition {
  key: string;
  phase: FlowPhase;
  text: string;
  simplified: string;
  description: string;
  answerType: AnswerType;
  options?: QuestionOption[];
  /** Inclusive bounds of a number answer (integers only when `integer`). */
  bounds?: { min: number; max: number; integer: boolean };
  required: boolean;
  /**
   * How much the question counts toward its phase's readiness score. A phase's required questions
   * alone weigh at least the readiness threshold (a test holds this): optional ones raise the
   * score, and leaving them out never blocks a phase.
   */
  weight: number;
}

const options = (pairs: Array<[value: string, label: string, exclusive?: 'exclusive']>): QuestionOption[] =>
  pairs.map(([value, label, exclusive]) => (exclusive ? { value, label, exclusive: true } : { value, label }));

export const capabilityOptions = options([
  ['accounts', 'User accounts and sign-in'],
  ['payments', 'Payments and billing'],
  ['messaging', 'Notifications and messages'],
  ['search', 'Search'],
  ['content', 'Content management'],
  ['scheduling', 'Scheduling and bookings'],
  ['reporting', 'Dashboards and reports'],
  ['files', 'File uploads'],
  ['collaboration', 'Teams and shared work'],
  ['integrations', 'Connections to other systems'],
]);

/**
 * The questions of every phase, in the order they are asked. Version 1 of the catalogue; a
 * project keeps the questions it was given when it entered a phase, so changing this list changes
 * what later phases and new projects are asked, never a question already on a project.
 */
export const questionCatalogue: readonly QuestionDefinition[] = [
  {
    key: 'problem',
    phase: 'DISCOVERY',
    text: 'What problem does the product solve, and for whom?',
    simplified: 'In one sentence: what is it for?',
    description: 'The goal every later phase is measured against.',
    answerType: 'text',
    required: true,
    weight: 4,
  },
  {
    key: 'audience',
    phase: 'DISCOVERY',
    text: 'Who will use the product?',
    simplified: 'Who are the users?',
    description: 'The kinds of people the product serves; each becomes an actor of the specification.',
    answerType: 'multiselect',
    options: options([
      ['consumers', 'Consumers'],
      ['businesses', 'Business customers'],
      ['staff', 'Internal staff'],
      ['developers', 'Developers'],
      ['partners', 'Partners and resellers'],
    ]),
    required: true,
    weight: 3,
  },
  {
    key: 'platforms',
    phase: 'DISCOVERY',
    text: 'On which platforms must it run?',
    simplified: 'Where will people use it?',
    description: 'An API-only product skips visual design later on.',
    answerType: 'multiselect',
    options: options([
      ['web', 'Web'],
      ['ios', 'iOS'],
      ['android', 'Android'],
      ['desktop', 'Desktop'],
      ['api', 'API only', 'exclusive'],
    ]),
    required: true,
    weight: 3,
  },
  {
    key: 'capabilities',
    phase: 'DISCOVERY',
    text: 'Which capabilities does the product need?',
    simplified: 'What must it be able to do?',
    description: 'The feature candidates offered in feature selection come from these.',
    answerType: 'multiselect',
    options: capabilityOptions,
    required: true,
    weight: 4,
  },
  {
    key: 'entities',
    phase: 'DISCOVERY',
    text: 'What are the main things the product keeps track of?',
    simplified: 'What does it store? (comma-separated)',
    description: 'Comma-separated names, such as "customer, order, invoice"; each becomes an entity of the specification.',
    answerType: 'text',
    required: true,
    weight: 3,
  },
  {
    key: 'multiTenant',
    phase: 'DISCOVERY',
    text: 'Will separate customer organizations share one deployment, each seeing only its own data?',
    simplified: 'Will many companies use one shared install?',
    description: 'Decides whether the data model carries a tenant.',
    answerType: 'boolean',
    required: false,
    weight: 1,
  },
  {
    key: 'integrations',
    phase: 'DISCOVERY',
    text: 'Which outside systems must it connect to?',
    simplified: 'What other tools must it talk to? (comma-separated)',
    description: 'Comma-separated names, such as "Stripe, Salesforce"; "none" when it connects to nothing.',
    answerType: 'text',
    required: false,
    weight: 1,
  },
  {
    key: 'compliance',
    phase: 'DISCOVERY',
    text: 'Which regulations or standards apply to its data?',
    simplified: 'Any rules the data must follow?',
    description: 'Regulated data shapes storage, audit and access decisions.',
    answerType: 'multiselect',
    options: options([
      ['gdpr', 'GDPR'],
      ['hipaa', 'HIPAA'],
      ['pci', 'PCI DSS'],
      ['soc2', 'SOC 2'],
      ['none', 'None', 'exclusive'],
    ]),
    required: false,
    weight: 1,
  },
  {
    key: 'scale',
    phase: 'DISCOVERY',
    text: 'How many users do you expect in the first year?',
    simplified: 'How many users, roughly?',
    description: 'Sizes the architecture proposed in plan generation.',
    answerType: 'select',
    options: options([
      ['small', 'Fewer than 1,000'],
      ['medium', '1,000 to 100,000'],
      ['large', 'More than 100,000'],
    ]),
    required: false,
    weight: 1,
  },
  {
    key: 'features',
    phase: 'FEATURE_SELECTION',
    text: 'Which features go into the product?',
    simplified: 'Pick the features you want.',
    description: 'The candidates come from the discovery answers; the selection becomes the project\'s selected features.',
    answerType: 'multiselect',
    required: true,
    weight: 4,
  },
  {
    key: 'firstFeature',
    phase: 'FEATURE_SELECTION',
    text: 'Which feature matters most for the first release?',
    simplified: 'What should be built first?',
    description: 'Orders the plan; asked only when there is more than one candidate.',
    answerType: 'select',
    required: false,
    weight: 1,
  },
  {
    key: 'architecture',
    phase: 'PLAN_GENERATION',
    text: 'Which architecture should the plan assume?',
    simplified: 'How should it be built?',
    description: 'Proposed from the patterns the earlier answers match.',
    answerType: 'select',
    options: options([
      ['monolith', 'One deployable application'],
      ['modular_monolith', 'One application in separate modules'],
      ['microservices', 'Separate services'],
      ['serverless', 'Managed functions'],
    ]),
    required: true,
    weight: 2,
  },
  {
    key: 'timeline',
    phase: 'PLAN_GENERATION',
    text: 'When must the first release ship?',
    simplified: 'How soon is it needed?',
    description: 'Recorded with the plan.',
    answerType: 'select',
    options: options([
      ['weeks', 'Within 4 weeks'],
      ['quarter', 'Within 3 months'],
      ['half_year', 'Within 6 months'],
      ['later', 'Later'],
    ]),
    required: true,
    weight: 1,
  },
  {
    key: 'teamSize',
    phase: 'PLAN_GENERATION',
    text: 'How many engineers will build it?',
    simplified: 'How many developers?',
    description: 'A whole number from 1 to 1000.',
    answerType: 'number',
    bounds: { min: 1, max: 1000, integer: true },
    required: true,
    weight: 1,
  },
  {
    key: 'milestones',
    phase: 'PLANNING',
    text: 'What are the milestones, in order?',
    simplified: 'What are the big steps? (one per line)',
    description: 'One milestone per line.',
    answerType: 'text',
    required: true,
    weight: 2,
  },
  {
    key: 'releaseStrategy',
    phase: 'PLANNING',
    text: 'How will it be released?',
    simplified: 'All at once or step by step?',
    description: 'Recorded with the plan.',
    answerType: 'select',
    options: options([
      ['all_at_once', 'Everything at once'],
      ['phased', 'In phases'],
      ['beta_first', 'A beta first'],
    ]),
    required: true,
    weight: 1,
  },
  {
    key: 'visualStyle',
    phase: 'VISUAL_DISCOVERY',
    text: 'Which visual style fits the product?',
    simplified: 'How should it look?',
    description: 'Not asked of an API-only product.',
    answerType: 'select',
    options: options([
      ['minimal', 'Minimal'],
      ['playful', 'Playful'],
      ['corporate', 'Corporate'],
      ['dense', 'Data-dense'],
    ]),
    required: true,
    weight: 3,
  },
  {
    key: 'brandColors',
    phase: 'VISUAL_DISCOVERY',
    text: 'Which brand colours should it use?',
    simplified: 'Any colours to use?',
    description: 'Free text, such as "#0a5, white". Not asked of an API-only product.',
    answerType: 'text',
    required: false,
    weight: 1,
  },
  {
    key: 'accessibility',
    phase: 'VISUAL_DISCOVERY',
    text: 'Which accessibility level must it meet?',
    simplified: 'How accessible must it be?',
    description: 'Not asked of an API-only product.',
    answerType: 'select',
    options: options([
      ['wcag_aa', 'WCAG 2.2 AA'],
      ['wcag_aaa', 'WCAG 2.2 AAA'],
      ['basic', 'No formal level'],
    ]),
    required: true,
    weight: 1,
  },
  {
    key: 'specFormat',
    phase: 'SPECIFICATION',
    text: 'Which specification format should be compiled?',
    simplified: 'Which spec format?',
    description: 'The format the compiled specification records (POST /specification/compile); v1 when not answered.',
    answerType: 'select',
    options: options([
      ['v1', 'Version 1'],
      ['v2', 'Version 2'],
    ]),
    required: true,
    weight: 4,
  },
  {
    key: 'includeTestPlan',
    phase: 'SPECIFICATION',
    text: 'Should the specification include a test plan?',
    simplified: 'Add a test plan?',
    description: 'Whether the compiled specification has test cases, one per requirement.',
    answerType: 'boolean',
    required: false,
    weight: 1,
  },
];

export function questionsOfPhase(phase: FlowPhase): QuestionDefinition[] {
  return questionCatalogue.filter((question) => question.phase === phase);
}

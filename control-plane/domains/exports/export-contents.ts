import type { CompiledSpec } from '../specifications/specifications.schema.ts';

/** What an export pack may hold, in the order its files are written. */
export const exportParts = ['spec', 'dod', 'testPlan', 'taskGraph', 'runbook', 'mcpConfig'] as const;
export type ExportPart = (typeof exportParts)[number];

/**
 * The definition of done: each requirement with what shows it done — its test cases' expected
 * outcomes; without a test plan, its acceptance criteria (a user story's), else a review — and what
 * holds for the whole product.
 */
export function definitionOfDone(spec: CompiledSpec) {
  return {
    requirements: spec.requirements.map((requirement) => {
      const tests = spec.testCases.filter((test) => test.requirementId === requirement.id);
      return {
        requirementId: requirement.id,
        title: requirement.title,
        priority: requirement.priority,
        doneWhen: tests.length > 0 ? tests.map((test) => `${test.id}: ${test.expected}`) : requirement.acceptanceCriteria?.length ? requirement.acceptanceCriteria : ['A review confirms it'],
      };
    }),
    overall: [
      'Every "must" requirement is done',
      ...(spec.testCases.length > 0 ? ['Every test case of the test plan passes'] : []),
      ...spec.endpoints.length > 0 ? [`The ${spec.endpoints.length} endpoints are served as specified`] : [],
    ],
  };
}

/**
 * How a coding assistant reaches Specwright for this project: the tool server, with the service's
 * address and an API key for the reader to fill in. The pack never carries a key.
 */
export function mcpConfig() {
  return {
    mcpServers: {
      specwright: {
        command: 'npx',
        args: ['specwright', 'tool-server'],
        env: { SPECWRIGHT_URL: '<the Specwright service URL>', SPECWRIGHT_API_KEY: '<an API key of yours>' },
      },
    },
  };
}

/** What a part holds, as data: undefined when the specification has none (a task graph or runbook not compiled). */
export function partData(part: ExportPart, spec: CompiledSpec): unknown {
  switch (part) {
    case 'spec':
      return spec;
    case 'dod':
      return definitionOfDone(spec);
    case 'testPlan':
      return { testCases: spec.testCases };
    case 'taskGraph':
      return spec.taskGraph;
    case 'runbook':
      return spec.runbook;
    case 'mcpConfig':
      return mcpConfig();
  }
}

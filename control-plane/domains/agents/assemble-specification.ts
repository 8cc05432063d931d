import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import type { SpecSection } from './agent-roster.ts';
import type { PlannedStep } from './agent-strategies.ts';

/**
 * A whole specification from the compiler's and the agents' sections: each section an agent
 * drafted is its last draft or revision (in step order); every other section stays the compiler's.
 * Answers who wrote each section.
 */
export function assembleSections(compiled: CompiledSpec, drafts: Array<{ step: PlannedStep; output: unknown }>) {
  const spec: CompiledSpec = { ...compiled };
  const draftedBy: Partial<Record<SpecSection, string>> = {};
  for (const { step, output } of [...drafts].sort((a, b) => a.step.step - b.step.step)) {
    for (const section of step.sections) {
      (spec as Record<string, unknown>)[section] = (output as Record<string, unknown>)[section];
      draftedBy[section] = step.agent;
    }
  }
  return { spec, draftedBy };
}

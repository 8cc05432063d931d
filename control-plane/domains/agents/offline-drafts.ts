import { compileSpecification, validateSpecification } from '../specifications/compile-specification.ts';
import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import type { AgentCallContext } from './agent-call-request.ts';
import { assembleSections } from './assemble-specification.ts';

/**
 * What the offline provider answers a call with, drafted from the project's answers without a
 * model: a draft's sections are the deterministic compiler's (a revision keeps them: nothing in
 * another offline draft changes what the answers say); the plan gives each agent its sections; the
 * review approves when the drafts so far make a valid specification and otherwise names what is
 * missing.
 */
export function draftOffline(context: AgentCallContext): unknown {
  const { step, input, options } = context;
  const compiled = compileSpecification(input, options, 1).spec;
  if (step.task === 'plan') {
    return {
      assignments: context.team.map((member) => ({
        agent: member.agent,
        sections: member.sections,
        focus: `Draft ${member.sections.join(' and ')} for ${input.project.name} from the project's ${input.answers.length} answers`,
      })),
    };
  }
  if (step.task === 'review') {
    const drafted = assembleSections(compiled, context.read.filter(({ step: read }) => read.task === 'draft' || read.task === 'revise'));
    const validation = validateSpecification(drafted.spec, input);
    return { approved: validation.passed, notes: validation.errors.map((error) => error.message) };
  }
  return Object.fromEntries(step.sections.map((section) => [section, compiled[section as keyof CompiledSpec]]));
}

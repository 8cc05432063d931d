import { createHash } from 'node:crypto';
import { stringify as stableJson } from 'safe-stable-stringify';
import { z } from 'zod';
import type { CompileInput, CompileOptions } from '../specifications/compile-specification.ts';
import { compiledSpec } from '../specifications/specifications.schema.ts';
import { agentRoster, SUPERVISOR_INSTRUCTIONS, type AgentName } from './agent-roster.ts';
import type { PlannedStep } from './agent-strategies.ts';

/** Everything a call is made from: its step, the project's answers, and what the steps it reads wrote. */
export interface AgentCallContext {
  step: PlannedStep;
  input: CompileInput;
  options: CompileOptions;
  /** The execution's drafting steps (who drafts which sections), for the supervisor's plan. */
  team: PlannedStep[];
  read: Array<{ step: PlannedStep; output: unknown }>;
}

export const planOutput = z.object({
  assignments: z.array(z.object({ agent: z.string(), sections: z.array(z.string()), focus: z.string() })),
});
export const reviewOutput = z.object({ approved: z.boolean(), notes: z.array(z.string()) });

/** What the call must answer with: its sections of the specification, a plan, or a review. */
export function outputSchemaOf(step: PlannedStep): z.ZodType {
  if (step.task === 'plan') return planOutput;
  if (step.task === 'review') return reviewOutput;
  return z.object(Object.fromEntries(step.sections.map((section) => [section, compiledSpec.shape[section]])));
}

function systemOf(step: PlannedStep): string {
  if (step.task === 'plan') return `${SUPERVISOR_INSTRUCTIONS}\nNow plan: answer with a JSON object {"assignments": [{"agent", "sections", "focus"}]}, one per drafting agent.`;
  if (step.task === 'review') return `${SUPERVISOR_INSTRUCTIONS}\nNow review the drafts: answer with a JSON object {"approved": boolean, "notes": [string]}.`;
  const { instructions } = agentRoster[step.agent as AgentName];
  const verb = step.task === 'revise' ? 'Revise your draft in the light of the other drafts' : 'Draft';
  return `${instructions}\n${verb}: answer with one JSON object whose keys are ${step.sections.join(', ')}, as the schema requires. Use only what the project's answers say; invent no facts.`;
}

function promptOf(context: AgentCallContext): string {
  const { input, options, team, read } = context;
  const lines = [
    `Project: ${input.project.name}`,
    `Description: ${input.project.description ?? '(none)'}`,
    `Phase reached: ${input.phase}`,
    `Format: ${options.format}; test plan: ${options.includeTestPlan ? 'yes' : 'no'}`,
    'Answers:',
    ...input.answers.map((answer) => {
      const labels = answer.labels ? ` (${answer.labels.join(', ')})` : '';
      const confidence = answer.confidence === null ? '' : ` [confidence ${answer.confidence}]`;
      return `- ${answer.key}: ${JSON.stringify(answer.value)}${labels}${confidence}`;
    }),
    `Required questions without an answer: ${input.unanswered.length > 0 ? input.unanswered.join(', ') : 'none'}`,
  ];
  // Only when there are some: a project without stories makes the same prompt, and hash, as before them.
  if (input.userStories && input.userStories.length > 0) lines.push('User stories (each a functional requirement, with its acceptance criteria):', ...input.userStories.map((story) => `- ${stableJson(story)}`));
  if (context.step.task === 'plan') lines.push('Team:', ...team.map((member) => `- ${member.agent}: ${member.sections.join(', ')}`));
  // Keys in sorted order: an output read back from the database (jsonb keeps its own key order)
  // makes the same prompt, and hash, as the one just returned.
  for (const { step, output } of read) lines.push(`${step.task === 'plan' ? 'Plan' : step.task === 'review' ? 'Review' : `Draft of ${step.sections.join(', ')}`} by ${step.agent} (step ${step.step}):`, stableJson(output) ?? 'null');
  return lines.join('\n');
}

/** The call's system text, prompt and their hash: the same context always makes the same call. */
export function agentCallRequest(context: AgentCallContext) {
  const system = systemOf(context.step);
  const prompt = promptOf(context);
  const promptHash = createHash('sha256').update(system).update('\0').update(prompt).digest('hex');
  return { system, prompt, promptHash, schema: outputSchemaOf(context.step) };
}

import type { CompiledSpec } from '../specifications/specifications.schema.ts';

/** A section of the specification an agent may draft (metadata is the service's, never an agent's). */
export type SpecSection = Exclude<keyof CompiledSpec, 'metadata'>;

export interface AgentProfile {
  /** The sections this agent drafts; the rest of a specification is the compiler's. */
  sections: SpecSection[];
  /** What the agent is told it is for (the start of its system prompt). */
  instructions: string;
}

/**
 * The agents an execution may name, each responsible for its own sections. A section no named
 * agent drafts is compiled deterministically from the project's answers, so every specification
 * is whole; `metadata.draftedBy` says who wrote what.
 */
export const agentRoster = {
  analyst: {
    sections: ['overview', 'requirements'],
    instructions: 'You are the analyst. State the product: its problem, audience, platforms, capabilities and integrations, and its functional and non-functional requirements, each traceable to an answer.',
  },
  architect: {
    sections: ['entities', 'architecture'],
    instructions: 'You are the architect. Name the entities the product keeps, each with its collection path, fields and operations, and the architecture: style, patterns, tenancy, platforms, timeline, team and milestones.',
  },
  'api-designer': {
    sections: ['endpoints', 'workflows'],
    instructions: "You are the API designer. Design the endpoints (method, path, summary, source) over the entities and features, and each selected feature's workflow as steps a user takes.",
  },
  'qa-engineer': {
    sections: ['testCases'],
    instructions: 'You are the QA engineer. Write one test case per requirement, naming the requirement and the expected outcome (none when the test plan is not asked for).',
  },
  designer: {
    sections: ['designSystem'],
    instructions: 'You are the designer. Describe the design system: visual style, brand colours and accessibility level (null for a product with no user interface).',
  },
} as const satisfies Record<string, AgentProfile>;

export type AgentName = keyof typeof agentRoster;
export const agentNames = Object.keys(agentRoster) as AgentName[];

/** Who plans the work before the workers draft and reviews it after (the hierarchical strategy). */
export const SUPERVISOR = 'supervisor';
export const SUPERVISOR_INSTRUCTIONS =
  'You are the supervisor of a team drafting a software specification. Plan who drafts what and what each should focus on; once they have drafted, review the result against the project and approve it or say what is missing.';

import type { AgentStrategy, AgentTask } from '../../db/database.ts';
import { agentRoster, SUPERVISOR, type AgentName, type SpecSection } from './agent-roster.ts';

export const agentStrategies = ['sequential', 'parallel', 'hierarchical', 'debate'] as const satisfies readonly AgentStrategy[];

/** One call of an execution, planned before any is made; `step` counts from 1. */
export interface PlannedStep {
  step: number;
  agent: string;
  task: AgentTask;
  /** What a draft or a revision writes; nothing for a plan or a review. */
  sections: SpecSection[];
  /** The earlier steps whose outputs this step's prompt carries. */
  reads: number[];
  /** Steps of one wave read nothing of each other, so they may run at once; waves run in order. */
  wave: number;
}

/**
 * The calls a strategy makes with these agents:
 * - sequential: each agent drafts in turn, reading every draft before its own;
 * - parallel: every agent drafts from the project alone, all at once;
 * - hierarchical: the supervisor plans, the agents draft (each reading the plan), the supervisor reviews;
 * - debate: every agent drafts alone, then each revises its draft having read all the others.
 */
export function planSteps(strategy: AgentStrategy, agents: readonly AgentName[]): PlannedStep[] {
  const sections = (agent: AgentName): SpecSection[] => [...agentRoster[agent].sections];
  const numbered = (steps: Array<Omit<PlannedStep, 'step'>>) => steps.map((step, index) => ({ ...step, step: index + 1 }));
  const drafts = agents.map((agent, index) => ({ agent, task: 'draft' as const, sections: sections(agent), index }));
  switch (strategy) {
    case 'sequential':
      return numbered(drafts.map(({ index, ...draft }) => ({ ...draft, reads: range(1, index), wave: index + 1 })));
    case 'parallel':
      return numbered(drafts.map(({ index: _index, ...draft }) => ({ ...draft, reads: [], wave: 1 })));
    case 'hierarchical':
      return numbered([
        { agent: SUPERVISOR, task: 'plan', sections: [], reads: [], wave: 1 },
        ...drafts.map(({ index: _index, ...draft }) => ({ ...draft, reads: [1], wave: 2 })),
        { agent: SUPERVISOR, task: 'review', sections: [], reads: range(1, agents.length + 1), wave: 3 },
      ]);
    case 'debate':
      return numbered([
        ...drafts.map(({ index: _index, ...draft }) => ({ ...draft, reads: [], wave: 1 })),
        ...drafts.map(({ index: _index, ...draft }) => ({ ...draft, task: 'revise' as const, reads: range(1, agents.length), wave: 2 })),
      ]);
  }
}

/** from..to, both included (empty when to < from). */
function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, index) => from + index);
}

/** The steps by wave, in order. */
export function wavesOf(steps: PlannedStep[]): PlannedStep[][] {
  const waves = new Map<number, PlannedStep[]>();
  for (const step of steps) waves.set(step.wave, [...(waves.get(step.wave) ?? []), step]);
  return [...waves.keys()].sort((a, b) => a - b).map((wave) => waves.get(wave)!);
}

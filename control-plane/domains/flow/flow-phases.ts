import type { ProjectPhase } from '../../db/database.ts';
import type { progressKeys } from '../projects/projects.schema.ts';

/** The phases a project's flow asks questions in: every phase after CREATED, in order. */
export const flowPhases = ['DISCOVERY', 'FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION'] as const;
export type FlowPhase = (typeof flowPhases)[number];

/** The phases `POST /flow/transition` may move to (DISCOVERY is entered by `POST /flow/start`). */
export const transitionTargets = ['FEATURE_SELECTION', 'PLAN_GENERATION', 'PLANNING', 'VISUAL_DISCOVERY', 'SPECIFICATION'] as const;

/** The phase after `phase`, or undefined at the last one. A flow moves one phase forward at a time. */
export function phaseAfter(phase: ProjectPhase): FlowPhase | undefined {
  if (phase === 'CREATED') return 'DISCOVERY';
  return flowPhases[flowPhases.indexOf(phase) + 1];
}

/** The key a phase's progress has in a project's `progress` (list form) and `progress.byPhase`: one of the projects' progressKeys, which the compiler holds it to. */
export const progressKeyOf = {
  DISCOVERY: 'discovery',
  FEATURE_SELECTION: 'featureSelection',
  PLAN_GENERATION: 'planGeneration',
  PLANNING: 'planning',
  VISUAL_DISCOVERY: 'visualDiscovery',
  SPECIFICATION: 'specification',
} as const satisfies Record<FlowPhase, (typeof progressKeys)[number]>;

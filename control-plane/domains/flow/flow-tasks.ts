import type { TaskAction, TaskPriority, TaskType } from '../../db/database.ts';
import { createHash } from 'node:crypto';
import type { AnswerValue } from './flow-catalogue.ts';
import { namesIn, sameNameKey } from './flow-derivations.ts';

/** A task an answer asks for, with what in the answer it stands for (`origin`: one task per origin in a project). */
export interface TaskFromAnswer {
  origin: string;
  type: TaskType;
  title: string;
  description: string;
  priority: TaskPriority;
  actions: TaskAction[];
}

/** The answers that make tasks, and the origin prefix of the tasks each one makes. */
export const taskOriginPrefixOf: Readonly<Record<string, string>> = { integrations: 'integration:', compliance: 'compliance:' };

/** Names an integrations answer lists at most; past these, the answer is no list of systems. */
const MAX_INTEGRATIONS = 20;
/** Characters of an origin after its prefix the database takes (tasks_origin check: `^[a-z]+:.{1,200}$`). */
const MAX_ORIGIN_KEY_LENGTH = 200;

/**
 * The tasks an answer asks for (pure): a CONNECT task for each outside system the integrations
 * answer names ("Stripe, Salesforce"; "none" names none), a REVIEW task for each regulation the
 * compliance answer picks. The names are those the ontology reads in the answer (namesIn: its
 * separators, its "none" and "N/A", at most 100 characters each), and they are compared as it
 * compares them (ignoring case, spacing, invisible characters and full-width forms), so "stripe",
 * " Stripe" and "Ｓｔｒｉｐｅ" are one system. Any other question makes none.
 */
export function tasksFromAnswer(key: string, value: AnswerValue, options: ReadonlyArray<{ value: string; label: string }>): TaskFromAnswer[] {
  if (key === 'integrations' && typeof value === 'string') return integrationTasks(value);
  if (key === 'compliance' && Array.isArray(value)) return value.filter((pick) => pick !== 'none').map((pick) => complianceTask(pick, options.find((option) => option.value === pick)?.label ?? pick));
  return [];
}

function integrationTasks(answer: string): TaskFromAnswer[] {
  const byKey = new Map<string, string>();
  for (const name of namesIn(answer)) {
    const key = originKeyOf(name);
    if (key === '' || byKey.has(key)) continue;
    byKey.set(key, name);
  }
  return [...byKey].slice(0, MAX_INTEGRATIONS).map(([key, name]) => ({
    origin: `integration:${key}`,
    type: 'CONNECT',
    title: `Connect ${name}`,
    description: `Discovery says the product connects to ${name}. Say how it is reached, so the specification and the kits can use it.`,
    priority: 'medium',
    actions: [
      {
        id: 'a1',
        type: 'FORM_SUBMIT',
        label: `How ${name} is reached`,
        config: {
          fields: [
            { name: 'baseUrl', label: 'Base URL of its API' },
            { name: 'authentication', label: 'How it authenticates (API key, OAuth 2.0, …)', required: true },
            { name: 'documentationUrl', label: 'Where its API is documented' },
          ],
        },
      },
    ],
  }));
}

function complianceTask(pick: string, label: string): TaskFromAnswer {
  return {
    origin: `compliance:${pick}`,
    type: 'REVIEW',
    title: `Review ${label} obligations`,
    description: `Discovery says ${label} applies to the product's data. Review what it asks of storage, audit and access before the specification is final.`,
    priority: 'high',
    actions: [{ id: 'a1', type: 'APPROVE_REJECT', label: `The specification meets ${label}`, config: { requireComment: true } }],
  };
}

/**
 * The origin key of a name: its comparison key (sameNameKey), whole when it fits the column's 200
 * characters; past that (folding may make one character many: "ﷺ" is 18), its first characters
 * and a digest of all of it, so two names that differ only late stay two systems.
 */
function originKeyOf(name: string): string {
  const key = sameNameKey(name);
  const characters = [...key];
  if (characters.length <= MAX_ORIGIN_KEY_LENGTH) return key;
  const digest = createHash('sha256').update(key).digest('hex').slice(0, 32);
  return `${characters.slice(0, MAX_ORIGIN_KEY_LENGTH - digest.length - 1).join('')}#${digest}`;
}

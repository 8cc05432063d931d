import { z } from 'zod';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { storedJsonAtMost } from '../../db/stored-json-size.ts';
import { pagedOutput, pagingInput } from '../../http/paging.ts';
import { uuidInput } from '../../http/uuid-input.ts';

export const taskTypes = ['PROVIDE', 'DECIDE', 'REVIEW', 'CONNECT'] as const;
export const taskStatuses = ['pending', 'in_progress', 'completed', 'cancelled', 'blocked'] as const;
export const taskPriorities = ['low', 'medium', 'high', 'urgent'] as const;

const name = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'must be a name of letters, digits and _ (starting with a letter), at most 64');
// Each text names its own NUL or unpaired surrogate, whatever else the body gets wrong (the object's
// own check runs only once every field has its shape).
const label = z.string().trim().min(1).max(200).superRefine(refuseUnstorableText);
const shortText = z.string().min(1).max(200).superRefine(refuseUnstorableText);

const formSubmit = z.strictObject({
  type: z.literal('FORM_SUBMIT'),
  label,
  config: z.strictObject({
    fields: z
      .array(z.strictObject({ name, label: label.optional(), required: z.boolean().optional() }))
      .min(1)
      .max(50)
      .refine((fields) => new Set(fields.map((field) => field.name)).size === fields.length, 'names a field twice')
      .describe('What the form asks; a submission gives these fields (the required ones at least) and no other'),
  }),
});
const singleSelect = z.strictObject({
  type: z.literal('SINGLE_SELECT'),
  label,
  config: z.strictObject({
    options: z
      .array(z.strictObject({ value: shortText, label }))
      .min(1)
      .max(50)
      .refine((options) => new Set(options.map((option) => option.value)).size === options.length, 'offers a value twice'),
    field: name.optional().describe('The output binding the choice is given as (the action id when absent)'),
  }),
});
const approveReject = z.strictObject({
  type: z.literal('APPROVE_REJECT'),
  label,
  config: z.strictObject({ requireComment: z.boolean().optional().describe('A rejection must say why') }).default({}),
});
/**
 * An ISO date-time PostgreSQL stores as given: its offset a real one (at most 14 hours; timestamptz
 * refuses one past 15:59) and its instant in the years 1 to 9999 (there is no year 0, and years
 * before 1 read back in a form no client parses): anything else would fail at the insert, a 500.
 */
const dueDateInput = z.iso
  .datetime({ offset: true })
  .refine((text) => {
    const offset = /([+-])(\d\d):(\d\d)$/.exec(text);
    const year = new Date(text).getUTCFullYear();
    return (!offset || Number(offset[2]) * 60 + Number(offset[3]) <= 14 * 60) && year >= 1 && year <= 9999;
  }, 'must be a date-time in the years 1 to 9999, its offset at most 14 hours');

const actionInput = z.discriminatedUnion('type', [formSubmit, singleSelect, approveReject]);

export const createTaskInput = z.strictObject({
  projectId: uuidInput(),
  type: z.enum(taskTypes),
  title: label,
  description: z.string().max(10_000).superRefine(refuseUnstorableText),
  priority: z.enum(taskPriorities).optional().describe('medium when absent'),
  assigneeType: z.enum(['user', 'agent']).optional(),
  assigneeId: shortText.optional().describe("A user who sees the project, or an agent's name (analyst, architect, …); with assigneeType"),
  actions: z.array(actionInput).min(1).max(20),
  targets: z.array(z.strictObject({ type: name, id: shortText })).max(50).optional(),
  dependencies: z
    .array(uuidInput())
    .max(50)
    .refine((ids) => new Set(ids).size === ids.length, 'names a task twice')
    .optional()
    .describe('Tasks of the same project that must complete first; until they do, this one is blocked'),
  dueDate: dueDateInput.optional(),
}).superRefine(refuseUnstorableText);

const taskAction = z.object({ id: z.string(), type: z.enum(['FORM_SUBMIT', 'SINGLE_SELECT', 'APPROVE_REJECT']), label: z.string(), config: z.record(z.string(), z.unknown()) });

export const taskOutput = z.object({
  id: z.uuid(),
  projectId: z.uuid(),
  type: z.enum(taskTypes),
  title: z.string(),
  description: z.string(),
  status: z.enum(taskStatuses).describe('blocked while a dependency is not completed; completed once an action is submitted'),
  priority: z.enum(taskPriorities),
  assigneeType: z.enum(['user', 'agent']).nullable(),
  assigneeId: z.string().nullable(),
  actions: z.array(taskAction),
  targets: z.array(z.object({ type: z.string(), id: z.string() })),
  dependencies: z.array(z.uuid()),
  dueDate: z.iso.datetime().nullable(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
});

export const listTasksInput = pagingInput.extend({
  projectId: uuidInput(),
  status: z.enum(taskStatuses).optional(),
  assigneeType: z.enum(['user', 'agent']).optional(),
  type: z.enum(taskTypes).optional(),
});

export const listTasksOutput = pagedOutput('tasks', taskOutput);

// The data is stored with the submission's response: a cap as projects' metadata has, counted as
// jsonb writes it, so a body of 1e308s cannot grow fifty-fold in the table.
const DATA_MAX_BYTES = 65_536;
const dataWithinCap = storedJsonAtMost(z.json(), DATA_MAX_BYTES);
// Absent data is left to the field's own rule (required); present data must fit the cap.
const refuseDataOverCap = (data: unknown, ctx: z.RefinementCtx) => {
  if (data !== undefined && !dataWithinCap.safeParse(data).success) ctx.addIssue({ code: 'custom', message: `must be at most ${DATA_MAX_BYTES} bytes as JSON` });
};

export const submitActionInput = z.strictObject({
  taskId: uuidInput(),
  actionId: z.string().min(1).max(64),
  data: z.unknown().superRefine(refuseDataOverCap).describe(
    `FORM_SUBMIT: {field: value, …}; SINGLE_SELECT: {value}; APPROVE_REJECT: {decision: approve|reject, comment?}. At most ${DATA_MAX_BYTES} bytes as JSON, counted as stored (numbers without exponent: 1e308 is 309 digits)`,
  ),
  idempotencyKey: z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, 'must be 1 to 255 visible ASCII characters')
    .optional()
    .describe('The same key with the same body answers the first submission again; with another body, 422 IDEMPOTENCY_MISMATCH; one still in progress, 409. Generated when absent'),
}).superRefine(refuseUnstorableText);

export const submitActionOutput = z.object({
  submissionId: z.uuid(),
  taskId: z.uuid(),
  actionId: z.string(),
  result: z.record(z.string(), z.unknown()),
  effects: z.object({
    taskCompleted: z.boolean(),
    outputBindings: z.array(z.object({ field: z.string(), value: z.unknown() })),
    workflowsTriggered: z.array(z.string()).describe('Always empty: workflows are not built'),
  }),
});

export const userTasksInput = pagingInput;

export const userTasksOutput = pagedOutput(
  'tasks',
  z.object({
    id: z.uuid(),
    projectId: z.uuid(),
    projectName: z.string(),
    type: z.enum(taskTypes),
    title: z.string(),
    status: z.enum(taskStatuses),
    priority: z.enum(taskPriorities),
    dueDate: z.iso.datetime().nullable(),
  }),
).extend({ counts: z.object({ pending: z.number().int(), inProgress: z.number().int(), completed: z.number().int() }) });

export type CreateTaskInput = z.infer<typeof createTaskInput>;
export type ListTasksInput = z.infer<typeof listTasksInput>;
export type SubmitActionInput = z.infer<typeof submitActionInput>;
export type TaskOutput = z.infer<typeof taskOutput>;
export type SubmitActionOutput = z.infer<typeof submitActionOutput>;

import type { TaskAction } from '../../db/database.ts';
import { invalid } from '../../errors/app-error.ts';

export interface ActionOutcome {
  result: Record<string, unknown>;
  outputBindings: Array<{ field: string; value: unknown }>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Refuses `data` that does not answer the action, naming the field, as VALIDATION_ERROR. */
const refuse = (field: string, issue: string) => invalid(`data does not answer this action: ${field} ${issue}`, { issues: [{ field, issue }] });

/**
 * What submitting `data` to `action` gives: its result and the values it binds. A form gives its
 * declared fields (the required ones at least, no other); a single select one of its options; an
 * approval a decision (and a comment, which a rejection must have when the action asks).
 */
export function answerAction(action: TaskAction, data: unknown): ActionOutcome {
  switch (action.type) {
    case 'FORM_SUBMIT': {
      const fields = (action.config.fields ?? []) as Array<{ name: string; required?: boolean }>;
      if (!isObject(data)) throw refuse('data', 'must be an object of the form\'s fields');
      const unknown = Object.keys(data).filter((key) => !fields.some((field) => field.name === key));
      if (unknown.length > 0) throw refuse(`data.${unknown[0]}`, `is not a field of this form (${fields.map((field) => field.name).join(', ')})`);
      // Own keys only: a field called `constructor` or `toString` is not given by Object.prototype.
      const given = fields.filter((field) => Object.hasOwn(data, field.name));
      const missing = fields.find((field) => field.required && (!Object.hasOwn(data, field.name) || data[field.name] === null || data[field.name] === ''));
      if (missing) throw refuse(`data.${missing.name}`, 'is required');
      return { result: { accepted: true, fields: given.map((field) => field.name) }, outputBindings: given.map((field) => ({ field: field.name, value: data[field.name] })) };
    }
    case 'SINGLE_SELECT': {
      const options = (action.config.options ?? []) as Array<{ value: string; label: string }>;
      const value = isObject(data) ? data.value : undefined;
      const chosen = options.find((option) => option.value === value);
      if (!chosen) throw refuse('data.value', `must be one of ${options.map((option) => JSON.stringify(option.value)).join(', ')}`);
      return { result: { value: chosen.value, label: chosen.label }, outputBindings: [{ field: (action.config.field as string | undefined) ?? action.id, value: chosen.value }] };
    }
    case 'APPROVE_REJECT': {
      if (!isObject(data) || (data.decision !== 'approve' && data.decision !== 'reject')) throw refuse('data.decision', 'must be "approve" or "reject"');
      const comment = data.comment;
      if (comment !== undefined && (typeof comment !== 'string' || comment.length > 2000)) throw refuse('data.comment', 'must be text of at most 2000 characters');
      const extra = Object.keys(data).find((key) => key !== 'decision' && key !== 'comment');
      if (extra) throw refuse(`data.${extra}`, 'is not taken (decision, comment)');
      if (data.decision === 'reject' && action.config.requireComment === true && !(typeof comment === 'string' && comment.trim())) throw refuse('data.comment', 'is required to reject');
      const decision = data.decision === 'approve' ? 'approved' : 'rejected';
      return { result: { decision, comment: comment ?? null }, outputBindings: [{ field: 'decision', value: decision }] };
    }
  }
}

/**
 * What each phase hook may return, and the default behaviour of phases a kit declares without a
 * hook. Hook results are untrusted JSON, so they are parsed like any other input.
 */
import { z } from 'zod';
import { KitHookError } from './errors.ts';
import { formatIssuePath, type KitPhase } from './manifest.schema.ts';
import { nestsDeeperThan } from './json-depth.ts';

const messages = z.array(z.string().max(2000)).max(200);

export const hookResultSchemas = {
  /** Anything JSON; becomes `context.spec` and `@spec` in templates. */
  SPEC: z.unknown(),
  /** Problems that stop the run. */
  CHECK: z.strictObject({ errors: messages.optional() }).nullable(),
  /** Anything JSON; replaces the default `{pools}` as `context.discovery` and `@discovery`. */
  DISCOVER: z.unknown(),
  /** Which outputs to render (all when absent) and data for templates (`@plan`). */
  PLAN: z.strictObject({ outputs: z.array(z.string()).optional(), data: z.unknown().optional() }).nullable(),
  /** Extra findings per output id, on top of the built-in validation. */
  VALIDATE: z
    .strictObject({
      outputs: z.record(z.string(), z.strictObject({ errors: messages.optional(), warnings: messages.optional() })).optional(),
    })
    .nullable(),
  /** Anything JSON; reported as `applyResult` and passed to VERIFY. */
  APPLY: z.unknown(),
  /** Errors fail the run; warnings are reported. */
  VERIFY: z.strictObject({ errors: messages.optional(), warnings: messages.optional() }).nullable(),
} satisfies Record<KitPhase, z.ZodType>;

export type HookResult<P extends KitPhase> = z.infer<(typeof hookResultSchemas)[P]>;

/**
 * Results are copied into later hook contexts and render requests with the host's recursive
 * JSON.stringify, which overflows its stack a few thousand levels down; no real result comes close.
 */
export const MAX_HOOK_RESULT_DEPTH = 256;

export function parseHookResult<P extends KitPhase>(phase: P, file: string, value: unknown): HookResult<P> {
  if (nestsDeeperThan(value, MAX_HOOK_RESULT_DEPTH)) {
    throw new KitHookError(`${phase} hook (${file}) returned a value that nests deeper than ${MAX_HOOK_RESULT_DEPTH} levels`);
  }
  const parsed = hookResultSchemas[phase].safeParse(value);
  if (parsed.success) return parsed.data as HookResult<P>;
  const issue = parsed.error.issues[0];
  const where = issue ? formatIssuePath(issue.path).replace('(manifest)', '(result)') : '(result)';
  throw new KitHookError(`${phase} hook (${file}) returned an unexpected value: ${where}: ${issue?.message ?? 'invalid'}`);
}

/**
 * Default CHECK: every dotted path in `inputs.required` leads to a non-empty value. Empty means
 * absent, null, blank text, or a list or object with nothing in it; 0 and false are values.
 */
export function findMissingInputs(input: unknown, required: readonly string[]): string[] {
  return required.filter((path) => {
    let value: unknown = input;
    for (const key of path.split('.')) {
      if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return true;
      value = (value as Record<string, unknown>)[key];
    }
    if (value === undefined || value === null) return true;
    if (typeof value === 'string') return value.trim() === '';
    if (Array.isArray(value)) return value.length === 0;
    return typeof value === 'object' && Object.keys(value).length === 0;
  });
}

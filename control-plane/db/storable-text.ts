import type { z } from 'zod';

interface Visit {
  value: unknown;
  parent: number;
  key: string | number | undefined;
}

/** Why PostgreSQL's text or jsonb would refuse (or, for text, silently alter) a string; null when it stores it as is. */
function unstorable(text: string): string | null {
  if (text.includes('\u0000')) return 'the NUL character (\\u0000)';
  // jsonb refuses the `\ud800` escape JSON.stringify writes for it; text would store U+FFFD instead.
  if (!text.isWellFormed()) return 'an unpaired UTF-16 surrogate (such as \\ud800)';
  return null;
}

const pathKey = (path: readonly PropertyKey[]) => JSON.stringify(path.map(String));

/**
 * PostgreSQL stores neither U+0000 nor an unpaired surrogate in `text` or `jsonb`: such a value
 * would fail at the insert and answer a 500. Attached with `.superRefine(refuseUnstorableText)` to
 * a string or an input object, this names every string that carries one, at any depth (but one
 * its own rules already refused, a kit id that is no slug: one mistake, one message); a key that
 * carries one is named by its object. The walk is iterative and builds a path only for a finding,
 * so deep free-form JSON stays cheap.
 */
export function refuseUnstorableText(input: unknown, ctx: z.RefinementCtx): void {
  const refused = new Set(ctx.issues.map((issue) => pathKey(issue.path ?? [])));
  const visits: Visit[] = [{ value: input, parent: -1, key: undefined }];
  const pathOf = (index: number) => {
    const path: Array<string | number> = [];
    for (let at = index; at > 0; at = visits[at]!.parent) path.unshift(visits[at]!.key!);
    return path;
  };
  for (let index = 0; index < visits.length; index += 1) {
    const { value } = visits[index]!;
    if (typeof value === 'string') {
      const problem = unstorable(value);
      if (problem && !refused.has(pathKey(pathOf(index)))) ctx.addIssue({ code: 'custom', path: pathOf(index), message: `must not contain ${problem}` });
    } else if (Array.isArray(value)) {
      value.forEach((item, position) => visits.push({ value: item, parent: index, key: position }));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const problem = unstorable(key);
        if (problem) ctx.addIssue({ code: 'custom', path: pathOf(index), message: `a key must not contain ${problem}` });
        visits.push({ value: item, parent: index, key });
      }
    }
  }
}

/**
 * The first `length` UTF-16 units of `text`, one fewer when the cut would fall between the halves
 * of a surrogate pair: half an emoji is a lone surrogate, which jsonb refuses and text would store
 * as U+FFFD (see unstorable above). Cut text stays storable, and shows whole characters.
 */
export function cutBetweenCharacters(text: string, length: number): string {
  if (text.length <= length) return text;
  const code = text.charCodeAt(length - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? length - 1 : length);
}

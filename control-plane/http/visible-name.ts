import { z } from 'zod';
import { hasVisibleCharacter, NO_VISIBLE_CHARACTER } from '../../kit-runtime/index.ts';

/**
 * A name people read in lists (a project, an organization, a key): trimmed, 1 to `max` characters,
 * and showing something — the rule kit manifests' display names follow, so "\u200b" is refused as
 * "   " is instead of listing as a blank row.
 */
export function visibleName(max: number) {
  return z
    .string()
    .trim()
    .min(1)
    .max(max)
    // Only for text the rules above took, so an empty name gets one message.
    .refine(hasVisibleCharacter, { error: NO_VISIBLE_CHARACTER, when: (payload) => payload.issues.length === 0 });
}

import { cutBetweenCharacters } from '../db/storable-text.ts';

/**
 * Caller input an answer quotes: cut to a length, ending in "…", never between the halves of a
 * surrogate pair (half an emoji would reach the caller as a lone surrogate). The start says what
 * is meant; the rest — a pasted file, kilobytes of an id — is not echoed back.
 */
export function cutForAnswer(text: string, length: number): string {
  return text.length <= length ? text : `${cutBetweenCharacters(text, length)}…`;
}

/**
 * Characters of an id a caller named quoted in a message (`The kit … was not found`). Every id the
 * schemas bound — a kit id (100), a version (128), a credential type (100) — is quoted whole; an
 * output id, which a path may carry up to 16 KiB of, is cut.
 */
export const MAX_QUOTED_ID_LENGTH = 128;

/** An id the caller named, as a NOT_FOUND or VALIDATION_ERROR message may quote it. */
export const quotedId = (id: string) => cutForAnswer(id, MAX_QUOTED_ID_LENGTH);

/** How many characters of a path an answer quotes: enough to see which, not 16 KiB of it back. */
export const MAX_QUOTED_PATH_LENGTH = 200;

/**
 * A path the caller sent (`/api/…` no route takes, a tRPC procedure path), as an answer quotes it:
 * in a message, and in a tRPC error's `data.path`.
 */
export const quotedPath = (path: string) => cutForAnswer(path, MAX_QUOTED_PATH_LENGTH);

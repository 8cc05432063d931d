import { z } from 'zod';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { normalisedPassword } from './password-hash.ts';

/** Characters as hashed: code points of the normalised password, not UTF-16 units. */
const hashedLength = (password: string) => [...normalisedPassword(password)].length;

/** What a new password must be: long enough to resist guessing, short enough to hash cheaply. */
export const newPasswordSchema = z
  .string()
  // A bound before normalising anything (NFKC composes at most a few code units into one character).
  .max(4096, 'a password has at most 256 characters')
  // Counted only within that bound, so a password past it is told once, not twice.
  .refine((password) => hashedLength(password) >= 12, { error: 'a password has at least 12 characters', when: (payload) => payload.issues.length === 0 })
  .refine((password) => hashedLength(password) <= 256, { error: 'a password has at most 256 characters', when: (payload) => payload.issues.length === 0 })
  .describe('12 to 256 characters, counted as Unicode code points after NFKC normalisation')
  // Well-formed text only: a lone surrogate would hash as U+FFFD, and sign-in refuses both.
  .superRefine(refuseUnstorableText);

export const loginInput = z
  .object({
    email: z.email().max(320),
    // Any length is accepted for a check (old passwords may predate the rules), within a cap.
    password: z.string().min(1).max(1024),
  })
  .strict()
  // No password can hold such text (new ones are refused the same way): say so, by field.
  .superRefine(refuseUnstorableText);

export const loginOutput = z.object({
  accessToken: z.string().describe('A session JWT; send it as Authorization: Bearer <token>'),
  tokenType: z.literal('Bearer'),
  expiresAt: z.iso.datetime(),
  expiresIn: z.number().int().describe('Seconds until the token expires'),
});

export type LoginInput = z.infer<typeof loginInput>;
export type LoginResult = z.infer<typeof loginOutput>;

import { sql, type RawBuilder } from 'kysely';

/**
 * One person whatever the letter case: emails are the same when their keys are, and this module is
 * the one definition of a key, in JavaScript and in SQL, which agree on every string.
 *
 * A key folds ASCII letters only. The email inputs take nothing but ASCII (z.email()), so that is
 * all the letter case there is; and it is the one folding JavaScript and every PostgreSQL agree
 * on. `lower()` under the database's own locale does not: under a Turkish one (libc tr_TR, ICU
 * `tr`, a database `DATABASE_URL` may name) it lowers 'I' to 'ı', and under C.UTF-8 it lowers 'İ'
 * to 'i' where `toLowerCase()` gives 'i̇'. `lower(… collate "C")` folds A–Z and nothing else,
 * whatever the database's locale. The unique index on users (migration 0027) is on the same
 * expression, so sign-in, sign-up and the index find one user.
 */
export function emailKey(email: string): string {
  return email.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** `column`'s email key in SQL: `lower(column collate "C")`, the expression users_email_key indexes. */
export function emailKeyOf(column: string): RawBuilder<string> {
  return sql<string>`lower(${sql.ref(column)} collate "C")`;
}

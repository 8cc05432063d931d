import type pg from 'pg';

/**
 * A plain-text description of everything of ours in `public` and `app_private`, read straight from
 * pg_catalog: what describeSchema (schema-snapshot.ts) describes, and what it leaves out that a
 * migration may still change: whole function definitions (language, volatility, pinned settings
 * such as search_path) and who may execute them, triggers as defined and whether enabled, and the
 * raw privileges on schemas, relations, columns and by default, whoever they are granted to.
 *
 * describeSchema reads information_schema, which takes most of a second a call; this takes a few
 * milliseconds, for comparing a schema at many points (migrations-go-down-and-up-again.test.ts).
 * Columns are listed in their order, not by attnum: a column dropped and added again keeps its
 * place in the list, though PostgreSQL numbers it anew.
 */
export async function describeCatalog(client: pg.Client): Promise<string> {
  const sections: Array<[title: string, text: string]> = [
    ['schemas', `select nspname, coalesce(nspacl::text, '∅') from pg_namespace where nspname in ('public', 'app_private') order by 1`],
    [
      'relations',
      `select n.nspname || '.' || c.relname, c.relkind, c.relpersistence, c.relrowsecurity, c.relforcerowsecurity,
              coalesce(c.relacl::text, '∅'), coalesce(c.reloptions::text, '∅')
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname in ('public', 'app_private') order by 1`,
    ],
    [
      'columns',
      `select n.nspname || '.' || c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
              coalesce(pg_get_expr(d.adbin, d.adrelid), '∅'), coalesce(a.attacl::text, '∅')
         from pg_attribute a
         join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
         left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where n.nspname in ('public', 'app_private') and c.relkind in ('r', 'p', 'v', 'm', 'f') and a.attnum > 0 and not a.attisdropped
        order by 1, a.attnum`,
    ],
    [
      'constraints',
      `select c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid), c.convalidated
         from pg_constraint c join pg_namespace n on n.oid = c.connamespace
        where n.nspname in ('public', 'app_private') order by 1, 2`,
    ],
    ['indexes', `select schemaname, tablename, indexname, indexdef from pg_indexes where schemaname in ('public', 'app_private') order by 1, 2, 3`],
    [
      'policies',
      `select schemaname, tablename, policyname, permissive, roles::text, cmd, coalesce(qual, '∅'), coalesce(with_check, '∅')
         from pg_policies where schemaname in ('public', 'app_private') order by 1, 2, 3`,
    ],
    [
      'functions',
      `select p.oid::regprocedure::text, md5(pg_get_functiondef(p.oid)), coalesce(p.proacl::text, '∅')
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname in ('public', 'app_private') order by 1`,
    ],
    [
      'triggers',
      `select c.relname, t.tgname, t.tgenabled, pg_get_triggerdef(t.oid)
         from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname in ('public', 'app_private') and not t.tgisinternal order by 1, 2`,
    ],
    [
      'types',
      `select n.nspname || '.' || t.typname, t.typtype from pg_type t join pg_namespace n on n.oid = t.typnamespace
        where n.nspname in ('public', 'app_private') order by 1`,
    ],
    [
      'default privileges',
      `select d.defaclrole::regrole::text, coalesce(n.nspname, '(every schema)'), d.defaclobjtype, d.defaclacl::text
         from pg_default_acl d left join pg_namespace n on n.oid = d.defaclnamespace order by 1, 2, 3`,
    ],
  ];
  const lines: string[] = [];
  for (const [title, text] of sections) {
    lines.push(`-- ${title}`);
    for (const row of (await client.query({ text, rowMode: 'array' })).rows as unknown[][]) lines.push(row.map(String).join(' | '));
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

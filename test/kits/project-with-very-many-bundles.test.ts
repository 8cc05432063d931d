import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.ts';
import { countRows, ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A project's bundles are deleted with it, by their ids. PostgreSQL takes at most 65,535 parameters
 * in one statement: with each id sent as a parameter of its own (`in ($2, $3, …)`), a project that
 * had run 65,535 bundled executions could never be deleted again (a 500 on every try).
 */
let app: TestApp;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

describe('a project with more bundled executions than a statement takes parameters', () => {
  it('is deleted with every bundle of its executions', async () => {
    const { tenantId, organizationId, apiKey } = app.bootstrap;
    const project = await call(app.url, '/api/projects', { apiKey, body: { name: 'Busy', organizationId } });
    expect(project.status, project.text).toBe(201);
    const projectId: string = project.body.data.id;
    const [kit] = await sqlAsOwner('select id, latest_version_id from kits where organization_id is null and latest_version_id is not null order by kit_id limit 1');
    const executions = 65_536;
    await sqlAsOwner(
      `with b as (
         insert into blobs (tenant_id, content_type, size_bytes, sha256, content)
         select $1, 'application/zip', 2, repeat('0', 64), '\\x504b'::bytea from generate_series(1, $6::int)
         returning id)
       insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, status, input, outputs_valid, bundle_blob_id, bundle_path, completed_at)
       select $1, $2, $3, $4, $5, 'completed', '{}', 1, b.id, 'executions/x/bundle.zip', now() from b`,
      [tenantId, organizationId, projectId, kit.id, kit.latest_version_id, executions],
    );
    const blobsBefore = await countRows(app.database.ownerUrl, 'blobs');

    const deleted = await call(app.url, `/api/projects/${projectId}`, { apiKey, method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.data.deletedTables).toEqual(expect.arrayContaining(['kit_executions', 'blobs', 'projects']));
    expect(await countRows(app.database.ownerUrl, 'kit_executions where project_id = $1', [projectId])).toBe(0);
    expect(blobsBefore - (await countRows(app.database.ownerUrl, 'blobs'))).toBe(executions);
  }, 120_000);
});

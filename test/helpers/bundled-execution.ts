import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { call } from './http.ts';
import { ownerQuery } from './owner-sql.ts';
import type { TestApp } from './test-app.ts';

/**
 * A finished execution of a built-in kit on a new project of the first-run organization, whose
 * bundle holds `content`: what a download link names, made without running a kit. Its id.
 */
export async function bundledExecution(app: TestApp, content: Buffer): Promise<string> {
  const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
  const { tenantId, organizationId } = app.bootstrap;
  const [blob] = await sqlAsOwner('insert into blobs (tenant_id, content_type, size_bytes, sha256, content) values ($1, $2, $3, $4, $5) returning id', [
    tenantId,
    'application/zip',
    content.length,
    createHash('sha256').update(content).digest('hex'),
    content,
  ]);
  const project = await call(app.url, '/api/projects', { apiKey: app.bootstrap.apiKey, body: { name: 'Bundled', organizationId } });
  expect(project.status, project.text).toBe(201);
  const [kit] = await sqlAsOwner('select id, latest_version_id from kits where organization_id is null and latest_version_id is not null order by kit_id limit 1');
  const [execution] = await sqlAsOwner(
    `insert into kit_executions (tenant_id, organization_id, project_id, kit_row_id, kit_version_id, status, input, outputs_valid, bundle_blob_id, completed_at)
     values ($1, $2, $3, $4, $5, 'completed', '{}', 1, $6, now()) returning id`,
    [tenantId, organizationId, project.body.data.id, kit.id, kit.latest_version_id, blob.id],
  );
  return execution.id;
}

import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownloadLinks } from '../../control-plane/http/download-links.ts';
import { call } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

let app: TestApp;
let link: string;
beforeAll(async () => {
  app = await startTestApp();
  const content = Buffer.from('PK fake zip');
  const [blob] = await ownerQuery(app.database.ownerUrl, 'insert into blobs (tenant_id, content_type, size_bytes, sha256, content) values ($1, $2, $3, $4, $5) returning id', [
    app.bootstrap.tenantId,
    'application/zip',
    content.length,
    createHash('sha256').update(content).digest('hex'),
    content,
  ]);
  link = createDownloadLinks(TEST_SERVER_SECRET).create({ tenantId: app.bootstrap.tenantId, blobId: blob.id, filename: 'bundle.zip' }).path;
});
afterAll(() => app?.stop());

describe('GET /api/downloads/<token>', () => {
  it('never writes the link, which is the credential, to the log', async () => {
    const token = link.slice('/api/downloads/'.length);
    expect((await call(app.url, link)).status).toBe(200);
    expect((await call(app.url, `/API/DOWNLOADS/${token}`)).status).toBe(200);
    const log = app.rawLog.join('\n');
    expect(log).toContain('/api/downloads/[redacted]');
    expect(log).not.toContain(token);
  });

  it('answers a path that is not valid URL encoding with VALIDATION_ERROR, not a 500', async () => {
    const response = await call(app.url, '/api/downloads/%E0%A4%A');
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    expect(app.logLines.filter((line) => line.msg === 'unexpected error')).toEqual([]);
  });
});

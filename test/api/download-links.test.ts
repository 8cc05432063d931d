import { createHash } from 'node:crypto';
import { get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDownloadLinks } from '../../control-plane/http/download-links.ts';
import { call } from '../helpers/http.ts';
import { untilLockWaiters } from '../helpers/lock-holder.ts';
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

  it('serves at most 2 downloads at once per client address and 6 in all, answering the rest at once to retry later', async () => {
    const download = (from: string) =>
      new Promise<{ status: number; retryAfter: string | undefined; code: string | undefined }>((resolve, reject) => {
        get(new URL(link, app.url), { localAddress: from }, (response) => {
          let text = '';
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'], code: response.statusCode === 200 ? undefined : JSON.parse(text).error.code }));
        }).on('error', reject);
      });
    // Every download waits on the blob table meanwhile, holding its slot.
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let held: Array<Promise<{ status: number }>> = [];
    try {
      await holder.query('begin');
      await holder.query('lock table blobs in access exclusive mode');
      held = ['127.0.0.2', '127.0.0.3', '127.0.0.4'].flatMap((from) => Array.from({ length: 2 }, () => download(from)));
      await untilLockWaiters(app.database.ownerUrl, 6);
      await sleep(300);
      expect(await download('127.0.0.2')).toEqual({ status: 429, retryAfter: '1', code: 'RATE_LIMITED' });
      expect(await download('127.0.0.5')).toEqual({ status: 503, retryAfter: '1', code: 'SERVICE_UNAVAILABLE' });
    } finally {
      await holder.query('commit');
      await holder.end();
    }
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual(Array(6).fill(200));
    // Every slot came back.
    expect((await download('127.0.0.2')).status).toBe(200);
  });
});


import { createHmac } from 'node:crypto';
import { get } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDownloadLinks } from '../../control-plane/http/download-links.ts';
import { bundledExecution } from '../helpers/bundled-execution.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { lockWaiterCount, untilLockWaiters } from '../helpers/lock-holder.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { until } from '../helpers/until.ts';
import { createUserInTenant, type Actor } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { TEST_SERVER_SECRET } from '../helpers/test-constants.ts';

let app: TestApp;
let orgId: string;
let executionId: string;
let link: string;
const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);


/** The download link GET …/bundle hands this caller. */
async function linkFor(apiKey: string, execution = executionId): Promise<string> {
  const response = await call(app.url, `/api/${orgId}/kits/executions/${execution}/bundle`, { apiKey });
  expect(response.status, response.text).toBe(200);
  return response.body.data.downloadUrl;
}

beforeAll(async () => {
  app = await startTestApp();
  orgId = app.bootstrap.organizationId;
  executionId = await bundledExecution(app, Buffer.from('PK fake zip'));
  link = await linkFor(app.bootstrap.apiKey);
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

describe('a download whose client goes away while its bundle is read', () => {
  it('keeps its slot until the read has ended, so abandoned downloads cannot start reads without bound', async () => {
    const from = '127.0.0.7';
    const download = () =>
      new Promise<{ status: number; code: string | undefined }>((resolve, reject) => {
        get(new URL(link, app.url), { localAddress: from }, (response) => {
          let text = '';
          response.on('data', (chunk) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, code: response.statusCode === 200 ? undefined : JSON.parse(text).error.code }));
        }).on('error', reject);
      });
    const abortedDownloads = () => app.logLines.filter((line) => line.msg === 'request aborted' && String((line.req as { url?: string })?.url).startsWith('/api/downloads/')).length;
    const abortedBefore = abortedDownloads();
    // Every read waits on the blob table meanwhile.
    const holder = new pg.Client({ connectionString: app.database.ownerUrl });
    await holder.connect();
    let third: Promise<unknown> = Promise.resolve();
    try {
      await holder.query('begin');
      await holder.query('lock table blobs in access exclusive mode');
      const abandoned = [0, 1].map(() => get(new URL(link, app.url), { localAddress: from }).on('error', () => {}));
      await untilLockWaiters(app.database.ownerUrl, 2);
      for (const request of abandoned) request.destroy();
      await until('the service has seen both clients go', async () => abortedDownloads() >= abortedBefore + 2);
      // Both reads are still waiting: the address's two slots are still taken, and a third
      // download is refused at once instead of starting a third read.
      let answered = false;
      third = download().finally(() => (answered = true));
      const thirdReadWaits = async () => {
        while (!answered) {
          if ((await lockWaiterCount(app.database.ownerUrl)) >= 3) return 'a third read waits on the database';
          await sleep(20);
        }
      };
      const answer = await Promise.race([third, thirdReadWaits()]);
      expect(answer).toEqual({ status: 429, code: 'RATE_LIMITED' });
    } finally {
      await holder.query('commit');
      await holder.end();
    }
    await third;
    await until('the slots are back once the reads have ended', async () => (await download()).status === 200);
  });
});

describe('a download link whose holder has lost access to its bundle', () => {
  let member: Actor;
  const addMember = async () => {
    member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Holder');
    const added = await call(app.url, `/api/organizations/${orgId}/members`, { apiKey: app.bootstrap.apiKey, body: { userId: member.userId, role: 'member' } });
    expect(added.status, added.text).toBe(201);
  };
  /** What a caller can tell apart: the status and the error, and the envelope's fields. */
  const answerOf = (response: ApiResponse) => ({ status: response.status, error: response.body?.error, fields: Object.keys(response.body ?? {}).sort() });
  let forged: ReturnType<typeof answerOf>;

  beforeAll(async () => {
    forged = answerOf(await call(app.url, `${link.slice(0, -3)}abc`));
    expect(forged).toEqual({ status: 403, error: { code: 'FORBIDDEN', message: 'This download link is not valid' }, fields: ['error', 'metadata', 'success'] });
  });

  it('answers as a forged link once its holder is removed from the organization', async () => {
    await addMember();
    const held = await linkFor(member.apiKey);
    expect((await call(app.url, held)).status).toBe(200);
    const removed = await call(app.url, `/api/organizations/${orgId}/members/${member.userId}`, { apiKey: app.bootstrap.apiKey, method: 'DELETE' });
    expect(removed.status, removed.text).toBe(200);
    expect(answerOf(await call(app.url, held))).toEqual(forged);
    // The organization's other links go on serving.
    expect((await call(app.url, link)).status).toBe(200);
  });

  it('answers as a forged link once its holder\'s user is gone', async () => {
    await addMember();
    const held = await linkFor(member.apiKey);
    // No operation deletes a user yet; the owner role does, as an operator would.
    await sqlAsOwner('delete from users where id = $1', [member.userId]);
    expect(answerOf(await call(app.url, held))).toEqual(forged);
  });

  it('answers as a forged link once the API key it was asked for with is revoked; links of the holder\'s other keys still serve', async () => {
    await addMember();
    const held = await linkFor(member.apiKey);
    const second = await call(app.url, '/api/developer/api-keys', { apiKey: member.apiKey, body: { name: 'second' } });
    expect(second.status, second.text).toBe(201);
    const heldThroughSecond = await linkFor(second.body.data.key);
    const [first] = await sqlAsOwner('select id from api_keys where user_id = $1 and name = $2', [member.userId, 'test']);
    const revoked = await call(app.url, `/api/developer/api-keys/${first.id}`, { apiKey: second.body.data.key, method: 'DELETE' });
    expect(revoked.status, revoked.text).toBe(200);
    expect(answerOf(await call(app.url, held))).toEqual(forged);
    expect((await call(app.url, heldThroughSecond)).status).toBe(200);
  });

  it('answers as a forged link while kits are switched off for the tenant, and serves again once they are back on', async () => {
    const switchKits = (enabled: boolean) => call(app.url, `/api/admin/tenants/${app.bootstrap.tenantId}/features`, { apiKey: app.bootstrap.apiKey, method: 'PATCH', body: { kits_enabled: enabled } });
    expect((await switchKits(false)).status).toBe(200);
    try {
      expect(answerOf(await call(app.url, link))).toEqual(forged);
    } finally {
      expect((await switchKits(true)).status).toBe(200);
    }
    expect((await call(app.url, link)).status).toBe(200);
  });

  it('is NOT_FOUND to a holder who may still read it once its project is deleted', async () => {
    const doomed = await bundledExecution(app, Buffer.from('PK fake zip'));
    const held = await linkFor(app.bootstrap.apiKey, doomed);
    const [{ project_id: projectId }] = await sqlAsOwner('select project_id from kit_executions where id = $1', [doomed]);
    expect((await call(app.url, `/api/projects/${projectId}`, { apiKey: app.bootstrap.apiKey, method: 'DELETE' })).status).toBe(200);
    const gone = await call(app.url, held);
    expect([gone.status, gone.body.error]).toEqual([404, { code: 'NOT_FOUND', message: 'The file behind this link no longer exists' }]);
  });
});

describe('the edges of a download link', () => {
  it('has expired at the instant its expiresAt names, as a token has at its exp, and serves up to the millisecond before', async () => {
    const handed = await call(app.url, `/api/${orgId}/kits/executions/${executionId}/bundle`, { apiKey: app.bootstrap.apiKey });
    expect(handed.status, handed.text).toBe(200);
    const expiresAt = Date.parse(handed.body.data.expiresAt);
    // The service runs in this process: only its clock (Date) is moved, never its timers.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(expiresAt - 1);
      expect((await call(app.url, handed.body.data.downloadUrl)).status).toBe(200);
      vi.setSystemTime(expiresAt);
      const expired = await call(app.url, handed.body.data.downloadUrl);
      expect([expired.status, expired.body.error]).toEqual([403, { code: 'FORBIDDEN', message: 'This download link has expired; ask for a new one' }]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('answers a signed link that names no ids, or holds no JSON, as a forged one: never a 500', async () => {
    // Only a holder of SERVER_SECRET can sign these (a server of another version, an operator's script).
    const notIds = createDownloadLinks(TEST_SERVER_SECRET).create({ tenantId: 'a tenant', holder: { userId: 'a user' }, organizationId: 'o', executionId: 'x', blobId: 'b', filename: 'f.zip' });
    // Signed as download-links.ts signs: HMAC-SHA256 under a key derived from the secret.
    const linkKey = createHmac('sha256', TEST_SERVER_SECRET).update('specwright-download-links').digest();
    const notJson = Buffer.from('not json').toString('base64url');
    const notJsonPath = `/api/downloads/${notJson}.${createHmac('sha256', linkKey).update(notJson).digest('base64url')}`;
    for (const path of [notIds.path, notJsonPath]) {
      const answer = await call(app.url, path);
      expect([answer.status, answer.body.error], path).toEqual([403, { code: 'FORBIDDEN', message: 'This download link is not valid' }]);
    }
    expect(app.logLines.filter((line) => line.msg === 'unexpected error')).toEqual([]);
  });
});

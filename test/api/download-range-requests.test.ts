import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledExecution } from '../helpers/bundled-execution.ts';
import { call } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let link: string;
const content = Buffer.from('PK\u0003\u0004 the bytes of a bundle');

beforeAll(async () => {
  app = await startTestApp();
  const executionId = await bundledExecution(app, content);
  const handed = await call(app.url, `/api/${app.bootstrap.organizationId}/kits/executions/${executionId}/bundle`, { apiKey: app.bootstrap.apiKey });
  expect(handed.status, handed.text).toBe(200);
  link = handed.body.data.downloadUrl;
});
afterAll(() => app?.stop());

/** What a client resuming a download sees: status, the range headers, the bytes. */
async function download(headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(`${app.url}${link}`, { method, headers });
  const body = Buffer.from(await response.arrayBuffer());
  const header = (name: string) => response.headers.get(name);
  return { status: response.status, contentRange: header('content-range'), contentLength: header('content-length'), acceptRanges: header('accept-ranges'), body: body.toString('latin1') };
}

describe('GET /api/downloads/<token> with a Range', () => {
  it('advertises byte ranges and a strong ETag on a whole download and on a HEAD', async () => {
    const whole = await fetch(`${app.url}${link}`);
    expect([whole.status, whole.headers.get('accept-ranges'), whole.headers.get('etag')]).toEqual([200, 'bytes', expect.stringMatching(/^"[0-9a-f]{64}"$/)]);
    const head = await fetch(`${app.url}${link}`, { method: 'HEAD' });
    expect([head.status, head.headers.get('accept-ranges'), head.headers.get('etag')]).toEqual([200, 'bytes', whole.headers.get('etag')]);
  });

  it('answers 206 with the part asked for, so a broken download resumes where it stopped', async () => {
    const text = content.toString('latin1');
    expect(await download({ range: 'bytes=10-' })).toEqual({ status: 206, contentRange: `bytes 10-${content.length - 1}/${content.length}`, contentLength: String(content.length - 10), acceptRanges: 'bytes', body: text.slice(10) });
    expect(await download({ range: 'bytes=0-3' })).toMatchObject({ status: 206, contentRange: `bytes 0-3/${content.length}`, contentLength: '4', body: 'PK\u0003\u0004' });
    expect(await download({ range: 'bytes=-5' })).toMatchObject({ status: 206, contentRange: `bytes ${content.length - 5}-${content.length - 1}/${content.length}`, body: text.slice(-5) });
    // Beyond the end, as a resume of a download that had in fact finished: its length, no bytes.
    expect(await download({ range: `bytes=${content.length}-` })).toEqual({ status: 416, contentRange: `bytes */${content.length}`, contentLength: '0', acceptRanges: null, body: '' });
  });

  it('serves the whole file for several ranges, a Range it cannot read, or an If-Range that names another file', async () => {
    const etag = (await fetch(`${app.url}${link}`, { method: 'HEAD' })).headers.get('etag')!;
    expect(await download({ range: 'bytes=2-5', 'if-range': etag })).toMatchObject({ status: 206, body: content.toString('latin1').slice(2, 6) });
    for (const headers of [{ range: 'bytes=0-1,4-5' }, { range: 'pages=1' }, { range: 'bytes=x-y' }, { range: 'bytes=2-5', 'if-range': '"another"' }, { range: 'bytes=2-5', 'if-range': 'Wed, 21 Oct 2015 07:28:00 GMT' }] as Array<Record<string, string>>) {
      expect([headers, await download(headers)]).toEqual([headers, { status: 200, contentRange: null, contentLength: String(content.length), acceptRanges: 'bytes', body: content.toString('latin1') }]);
    }
  });

  it('checks the link before any range: an altered link is refused as without one', async () => {
    const forged = await call(app.url, `${link.slice(0, -3)}abc`, { headers: { range: 'bytes=0-3' } });
    expect([forged.status, forged.body.error]).toEqual([403, { code: 'FORBIDDEN', message: 'This download link is not valid' }]);
  });
});

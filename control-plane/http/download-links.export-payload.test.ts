import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createDownloadLinks } from './download-links.ts';

/**
 * An export link names the parts its pack holds. verify() refuses, as a forged link, one naming a
 * part no pack has or a part twice (only a holder of SERVER_SECRET could sign one): the download
 * would otherwise build a pack POST /exports/download never describes.
 */
const SECRET = 's'.repeat(48);
const links = createDownloadLinks(SECRET);
const ID = '11111111-1111-4111-8111-111111111111';

/** A token signed as create() signs, over any payload. */
function signed(payload: Record<string, unknown>): string {
  const key = createHmac('sha256', SECRET).update('specwright-download-links').digest();
  const encoded = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${encoded}.${createHmac('sha256', key).update(encoded).digest('base64url')}`;
}
const exportPayload = (include: unknown) => ({ n: 'export', t: ID, u: ID, p: ID, s: ID, m: 'json', i: include, f: 'pack.zip', e: Math.ceil(Date.now() / 1000) + 600 });

describe('export download links', () => {
  it('sign the way this test signs (so the refusals below are about the payload)', () => {
    const made = links.create({ kind: 'export', tenantId: ID, holder: { userId: ID }, projectId: ID, specificationId: ID, format: 'json', include: ['spec'], filename: 'pack.zip' });
    const token = made.path.slice('/api/downloads/'.length);
    expect(links.verify(signed(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())))).toMatchObject({ kind: 'export', include: ['spec'] });
  });

  it.each([
    ['an unknown part', ['spec', 'secrets']],
    ['a part twice', ['spec', 'spec']],
    ['no list', 'spec'],
  ])('refuse a payload naming %s as an invalid link', (_, include) => {
    expect(() => links.verify(signed(exportPayload(include)))).toThrow(expect.objectContaining({ code: 'FORBIDDEN', message: 'This download link is not valid' }));
  });
});

import { createHash } from 'node:crypto';
import { unzipSync, strFromU8 } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowWalker } from '../helpers/flow-walk.ts';
import { compiledSpecification } from '../helpers/compiled-specification.ts';
import { call
 } from '../helpers/http.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/** Export packs of a project's specification (seed §4.7): a ZIP by a signed link, built again on each download. */
let app: TestApp;
let apiKey: string;
let orgId: string;
let walk: ReturnType<typeof flowWalker>;
let projectId: string;
let specId: string;

const sqlAsOwner = (sql: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, sql, values);
const post = (path: string, body: unknown, key = apiKey) => call(app.url, `/api${path}`, { apiKey: key, body });

async function downloaded(url: string) {
  const response = await fetch(`${app.url}${url}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  return { response, bytes, files: response.status === 200 ? unzipSync(bytes) : {} };
}

async function compiled(project: string, options: Record<string, unknown> = {}) {
  const spec = await compiledSpecification(app, apiKey, project, options);
  expect(spec.status, spec.errorMessage).toBe('completed');
  return spec;
}

beforeAll(async () => {
  app = await startTestApp({ mode: 'all', env: { WORKER_HEARTBEAT_MS: '500', RATE_LIMIT_COMPILATION_PER_MINUTE: '1000' } });
  apiKey = app.bootstrap.apiKey;
  orgId = app.bootstrap.organizationId;
  walk = flowWalker(app, apiKey, orgId);
  projectId = await walk.finishedProject('Exported clinic');
  specId = (await compiled(projectId, { includeTaskGraph: true, includeRunbook: true })).id;
}, 120_000);
afterAll(() => app?.stop());

describe('export packs', () => {
  it('zip the specification and the parts asked for as JSON, with a manifest, by a link that serves the same bytes each time', async () => {
    const exported = await post('/exports/download', { projectId, format: 'json', include: { dod: true, testPlan: true, taskGraph: true, runbook: true, mcpConfig: true } });
    expect(exported.status, exported.text).toBe(200);
    expect(exported.body.data).toMatchObject({
      downloadUrl: expect.stringMatching(/^\/api\/downloads\//),
      specId,
      version: '1',
      contents: ['manifest.json', 'spec.json', 'definition-of-done.json', 'test-plan.json', 'task-graph.json', 'runbook.json', 'mcp.json'],
    });
    const { response, bytes, files } = await downloaded(exported.body.data.downloadUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(bytes.length).toBe(exported.body.data.size);
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(exported.body.data.sha256);
    expect(Object.keys(files).sort()).toEqual([...exported.body.data.contents].sort());

    const specification = (await call(app.url, `/api/specification/${specId}`, { apiKey })).body.data;
    expect(JSON.parse(strFromU8(files['spec.json']!))).toEqual(specification.spec);
    const manifest = JSON.parse(strFromU8(files['manifest.json']!));
    expect(manifest).toMatchObject({ format: 'specwright-export/1', exportFormat: 'json', projectId, specificationId: specId, specificationVersion: '1' });
    expect(manifest.files.map((file: { name: string }) => file.name)).toEqual(exported.body.data.contents.slice(1));
    // A pack's files come from no kit output: name, size and digest only.
    expect(manifest.files[0]).toEqual({ name: 'spec.json', sizeBytes: files['spec.json']!.length, sha256: createHash('sha256').update(files['spec.json']!).digest('hex') });
    const dod = JSON.parse(strFromU8(files['definition-of-done.json']!));
    expect(dod.requirements[0]).toMatchObject({ requirementId: 'FR-001', title: 'Calendar and bookings', priority: 'must', doneWhen: [expect.stringMatching(/^TC-001: /)] });
    expect(JSON.parse(strFromU8(files['mcp.json']!)).mcpServers.specwright).toMatchObject({ command: 'npx', args: ['specwright', 'tool-server'] });
    // The pack names no key, nor anything secret of the caller.
    expect(strFromU8(files['mcp.json']!)).not.toContain('swk_');

    // Built again on the next download: the same bytes.
    const again = await downloaded(exported.body.data.downloadUrl);
    expect(Buffer.from(again.bytes).equals(Buffer.from(bytes))).toBe(true);
    const head = await fetch(`${app.url}${exported.body.data.downloadUrl}`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length'), head.headers.get('etag')]).toEqual([200, String(bytes.length), `"${exported.body.data.sha256}"`]);
  });

  it('write Markdown for people, and an MCP pack with a guide for a coding assistant', async () => {
    const markdown = await post('/exports/download', { projectId, format: 'markdown', include: { dod: true, testPlan: true, runbook: true } });
    expect(markdown.body.data.contents).toEqual(['manifest.json', 'SPEC.md', 'DEFINITION-OF-DONE.md', 'TEST-PLAN.md', 'RUNBOOK.md']);
    const { files } = await downloaded(markdown.body.data.downloadUrl);
    const spec = strFromU8(files['SPEC.md']!);
    expect(spec).toMatch(/^# Exported clinic\n/);
    expect(spec).toContain('- Problem: Small clinics lose bookings because patients cannot book online after hours.');
    expect(spec).toContain('### patient (`/patients`)');
    expect(spec).toContain('- `POST /bookings` — Book a slot (Calendar and bookings)');
    expect(spec).toContain('- **FR-001** (functional, must) Calendar and bookings');
    expect(strFromU8(files['RUNBOOK.md']!)).toContain('1. Invite beta users');
    expect(strFromU8(files['DEFINITION-OF-DONE.md']!)).toContain('- [ ] TC-001: ');

    const mcp = await post('/exports/download', { projectId, format: 'mcp', include: { spec: true } });
    expect(mcp.body.data.contents).toEqual(['manifest.json', 'spec.json', 'mcp.json', 'README.md']);
    const guide = strFromU8((await downloaded(mcp.body.data.downloadUrl)).files['README.md']!);
    expect(guide).toContain(`specification ${specId} (version 1)`);
  });

  it('refuse what cannot be exported, clearly', async () => {
    const refuse = async (body: Record<string, unknown>, status: number, code: string) => {
      const response = await post('/exports/download', body);
      expect([response.status, response.body.error?.code], response.text).toEqual([status, code]);
      return response.body.error;
    };
    const notCompiled = await walk.newProject('Never compiled');
    expect((await refuse({ projectId: notCompiled, format: 'json' }, 409, 'CONFLICT')).message).toMatch(/no compiled specification/);
    const plain = await walk.finishedProject('Plain spec');
    const plainSpec = await compiled(plain);
    expect((await refuse({ projectId: plain, format: 'json', include: { taskGraph: true } }, 409, 'CONFLICT')).message).toContain('compile it with includeTaskGraph');
    await refuse({ projectId: plain, format: 'json', include: { spec: false } }, 409, 'CONFLICT');
    await refuse({ projectId: plain, format: 'pdf' }, 400, 'VALIDATION_ERROR');
    await refuse({ projectId: plain, format: 'json', include: { everything: true } }, 400, 'VALIDATION_ERROR');
    await refuse({ projectId: plain, specId, format: 'json' }, 404, 'NOT_FOUND');
    await refuse({ projectId: '00000000-0000-4000-8000-000000000000', format: 'json' }, 404, 'NOT_FOUND');
    // A named specification of the project is exported, not its latest.
    expect((await post('/exports/download', { projectId: plain, specId: plainSpec.id, format: 'json' })).body.data.specId).toBe(plainSpec.id);
  });

  it("serve a link only while its holder still sees the project; another tenant sees nothing", async () => {
    const member = await createUserInTenant(app, sqlAsOwner, app.bootstrap.tenantId, 'Mo');
    await sqlAsOwner(`insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, 'member')`, [app.bootstrap.tenantId, orgId, member.userId]);
    const link = (await post('/exports/download', { projectId, format: 'json' }, member.apiKey)).body.data.downloadUrl;
    expect((await downloaded(link)).response.status).toBe(200);
    expect((await call(app.url, `/api/organizations/${orgId}/members/${member.userId}`, { apiKey, method: 'DELETE' })).status).toBe(200);
    const refused = await call(app.url, link);
    expect([refused.status, refused.body.error]).toEqual([403, { code: 'FORBIDDEN', message: 'This download link is not valid' }]);

    const foreign = await createTenant(app, 'Export elsewhere');
    expect((await post('/exports/download', { projectId, format: 'json' }, foreign.apiKey)).status).toBe(404);
    // A tampered link is refused as any forged one.
    const tampered = await call(app.url, `${link.slice(0, -3)}abc`);
    expect(tampered.status).toBe(403);
  });
});

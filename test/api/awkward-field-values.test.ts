import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedOperations, UNKNOWN_UUID } from '../helpers/documented-operations.ts';
import { call, type ApiResponse } from '../helpers/http.ts';
import { sampleExecutionBody, sampleKit } from '../helpers/kit-fixtures.ts';
import { ownerQuery } from '../helpers/owner-sql.ts';
import { tenantTables } from '../helpers/table-snapshot.ts';
import { createTenant, createUserInTenant } from '../helpers/tenant-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A hostile but authenticated caller sends awkward values in every text, JSON and query field of
 * every documented operation that takes input: text PostgreSQL cannot store, 100,000 characters,
 * nothing but whitespace, bidi overrides and zero-width characters, emoji, numbers out of every
 * range, `__proto__` and `constructor` keys, arrays where objects belong. Each answer is either a
 * refusal in the envelope that leaves every row as it was, or a success that stored what was sent;
 * never a 500, never a stack trace.
 */
let app: TestApp;
let key: string;
let snapshotClient: pg.Client;
let ids: Record<string, string>;
const sqlAsOwner = (text: string, values: unknown[] = []) => ownerQuery(app.database.ownerUrl, text, values);

beforeAll(async () => {
  app = await startTestApp({ env: { RATE_LIMIT_GENERAL_PER_MINUTE: '100000' } });
  key = app.bootstrap.apiKey;
  snapshotClient = new pg.Client({ connectionString: app.database.ownerUrl });
  await snapshotClient.connect();
  const { organizationId, tenantId } = app.bootstrap;
  const member = await createUserInTenant(app, sqlAsOwner, tenantId, 'Mia');
  const customer = await createUserInTenant(app, sqlAsOwner, tenantId, 'Cato');
  for (const [userId, role] of [[member.userId, 'member'], [customer.userId, 'customer']] as const) {
    await sqlAsOwner('insert into organization_members (tenant_id, organization_id, user_id, role) values ($1, $2, $3, $4)', [tenantId, organizationId, userId, role]);
  }
  const project = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Sweep', organizationId } });
  const apiKey = await call(app.url, '/api/developer/api-keys', { apiKey: key, body: { name: 'sweep' } });
  const other = await createTenant(app, 'Sweep other');
  await call(app.url, `/api/admin/tenants/${tenantId}/features`, { method: 'PATCH', apiKey: key, body: { kits_enabled: true } });
  const kit = await call(app.url, `/api/${organizationId}/kits`, { apiKey: key, body: sampleKit({ credentials: [{ id: 'token', description: 'A token', required: false }] }) });
  expect([project.status, apiKey.status, kit.status]).toEqual([201, 201, 201]);
  ids = {
    id: organizationId,
    orgId: organizationId,
    organizationId,
    userId: member.userId,
    customerUserId: customer.userId,
    projectId: project.body.data.id,
    keyId: apiKey.body.data.id,
    tenantId: other.tenantId,
    kitId: 'service-starter',
  };
}, 60_000);
afterAll(async () => {
  await snapshotClient?.end();
  await app?.stop();
});

/**
 * What every tenant table holds, cheaply: its row count and the sum of its rows' creating
 * transaction ids. An insert or a delete changes the count, an update gives a row a new xmin, and
 * a rolled-back write leaves no visible row: equal means nothing was written. (Hashing every row,
 * as table-snapshot.ts does, reads each stored kit file and blob; a few hundred times is too slow.)
 */
async function snapshot(): Promise<string> {
  const parts = tenantTables.map((table) => `select '${table}' as t, count(*) || '/' || coalesce(sum(xmin::text::numeric), 0) as d from ${table}`);
  const { rows } = await snapshotClient.query(parts.join(' union all '));
  return rows.map((row) => `${row.t}:${row.d}`).join(',');
}

let unique = 0;
const next = () => `${Date.now().toString(36)}${(unique += 1)}`;

/** Text a hostile caller sends where a string belongs. */
const awkwardText: Record<string, string> = {
  'NUL': 'a\u0000b',
  'lone high surrogate': 'a\ud800b',
  'lone low surrogate': '\udc00',
  '100,000 characters': 'x'.repeat(100_000),
  '100,000 emoji': '😀'.repeat(50_000),
  'whitespace only': ' \t\n\r ',
  'Unicode whitespace only': '\u00a0\u2003\u3000\u2028',
  'empty': '',
  'bidi override': '\u202eevil\u202c',
  'zero-width only': '\u200b\u200c\u200d\u2060',
  'zero-width inside': 'ab\u200bcd',
  'emoji': '👩🏽‍💻 🚀',
  'combining marks': 'e\u0301\u0301\u0301',
};

/** Values of other JSON types where a string belongs, as raw JSON. */
const awkwardNonText: Record<string, string> = {
  '1e308': '1e308',
  '-1': '-1',
  '0.5': '0.5',
  'true': 'true',
  'null': 'null',
  'an array': '["a"]',
  'an object': '{"a":"b"}',
};

/** What a hostile caller sends where a free-form object belongs, as raw JSON so `__proto__` arrives as a key. */
const awkwardObjects: Record<string, string> = {
  '__proto__ key': '{"__proto__":{"isPlatformAdmin":true}}',
  'constructor key': '{"constructor":{"prototype":{"isPlatformAdmin":true}}}',
  'nested 60 levels': `${'{"a":'.repeat(60)}1${'}'.repeat(60)}`,
  'an array': '[{"a":1}]',
  'a string': '"text"',
  'a NUL key': '{"a\\u0000":1}',
  'a lone surrogate value': '{"a":"\\ud800"}',
  '1e308': '{"n":1e308}',
  '60 numbers of 309 digits': `{"n":[${Array(60).fill('1e308').join(',')}]}`,
  'a lone surrogate key': '{"\\udfff":1}',
  'negative zero and tiny': '{"n":-0,"m":5e-324}',
  'a key of 100,000 characters': `{"${'k'.repeat(100_000)}":1}`,
  '10,000 keys': JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))),
};

/** What a hostile caller sends in a query parameter, percent-encoded as it travels. */
const awkwardQuery: Record<string, string> = {
  '-1': '-1',
  '-0': '-0',
  '1.5': '1.5',
  '1e308': '1e308',
  '2^53 - 1': '9007199254740991',
  '2^53 + 1': '9007199254740993',
  '400 digits': '9'.repeat(400),
  'NaN': 'NaN',
  'Infinity': 'Infinity',
  'NUL': '%00',
  'lone surrogate as UTF-8': '%ED%A0%80',
  'bidi override': '%E2%80%AEx',
  'zero-width space': '%E2%80%8B',
  'emoji': encodeURIComponent('🚀'),
  'whitespace': '%20%09',
  '8,000 characters': 'x'.repeat(8_000),
};

type Operation = { requestBody?: { content: Record<string, { schema: Schema }> }; parameters?: Array<{ in: string; name: string }> };
type Schema = { type?: string | string[]; format?: string; enum?: unknown[]; properties?: Record<string, Schema>; additionalProperties?: unknown };

/** A body every field of which is valid, so that one awkward field is judged alone. */
const validBodies: Record<string, () => Record<string, unknown>> = {
  'POST /developer/api-keys': () => ({ name: 'sweep key' }),
  'POST /admin/tenants': () => ({ name: 'Sweep tenant', ownerEmail: `owner-${next()}@sweep.test`, ownerName: 'Sweep owner' }),
  'PATCH /admin/tenants/{tenantId}/features': () => ({ kits_enabled: false }),
  'POST /auth/login': () => ({ email: 'nobody@sweep.test', password: 'not the password at all' }),
  'POST /organizations': () => ({ name: 'Sweep org', slug: `sweep-${next()}`, displayName: 'Sweep', settings: { theme: 'dark', branding: { logo: 'https://cdn.example/logo.png' } } }),
  'PUT /organizations/{id}': () => ({ name: 'Sweep org', displayName: 'Sweep', settings: { theme: 'dark', branding: { logo: 'https://cdn.example/logo.png' } } }),
  'POST /organizations/{id}/members': () => ({ userId: ids.userId, role: 'member' }),
  'PUT /organizations/{id}/members/{userId}': () => ({ role: 'member' }),
  'POST /customer-invitations': () => ({ organizationId: ids.organizationId, email: `invitee-${next()}@sweep.test`, message: 'Welcome', roleId: 'customer' }),
  'POST /customer-invitations/{token}/accept': () => ({ name: 'Invitee', password: 'a long enough password' }),
  'POST /agency-projects': () => ({ organizationId: ids.organizationId, projectId: ids.projectId, customerUserId: ids.customerUserId }),
  'POST /projects': () => ({ name: 'Sweep project', description: 'About it', template: 'blank', metadata: { a: 1 }, organizationId: ids.organizationId }),
  'PATCH /projects/{projectId}': () => ({ name: 'Sweep', description: 'About it', metadata: { a: 1 }, status: 'active' }),
  'POST /{orgId}/kits/credentials': () => ({ projectId: ids.projectId, kitId: 'service-starter', credentialType: 'token', credentials: { token: 'secret' } }),
  'POST /{orgId}/kits/{kitId}/execute': () => sampleExecutionBody(ids.projectId!),
  'POST /{orgId}/kits': () => sampleKit({ id: `sweep-${next()}` }) as unknown as Record<string, unknown>,
  'PATCH /{orgId}/kits/{kitId}': () => ({ status: 'active' }),
};

/** A body from the document alone, for an operation without a hand-made one. */
function bodyFromSchema(schema: Schema): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const types = ([] as string[]).concat(property.type ?? []);
    if (property.enum) body[name] = property.enum[0];
    else if (property.format === 'uuid') body[name] = ids[name] ?? UNKNOWN_UUID;
    else if (types.includes('string')) body[name] = 'x';
    else if (types.includes('object')) body[name] = property.properties ? bodyFromSchema(property) : {};
  }
  return body;
}

/**
 * The body's fields, as paths, where the document describes them: its strings take awkward text,
 * and its objects (free-form or not) awkward JSON. A free-form object's own entries (a kit's files)
 * are left alone: the object as a whole stands for them.
 */
function fieldsOf(value: Record<string, unknown>, schema: Schema | undefined, prefix: string[] = []): Array<{ path: string[]; kind: 'text' | 'object' }> {
  return Object.entries(value).flatMap(([name, item]): Array<{ path: string[]; kind: 'text' | 'object' }> => {
    const path = [...prefix, name];
    const described = schema?.properties?.[name];
    if (typeof item === 'string') return [{ path, kind: 'text' }];
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      return [{ path, kind: 'object' }, ...(described?.properties ? fieldsOf(item as Record<string, unknown>, described, path) : [])];
    }
    return [];
  });
}

/** The body with `raw` (JSON text) at `path`, as raw JSON so keys such as `__proto__` survive. */
function withRawAt(body: Record<string, unknown>, path: string[], raw: string): string {
  const marker = `\u0001marker${next()}\u0001`;
  const copy = structuredClone(body);
  let at = copy as Record<string, unknown>;
  for (const name of path.slice(0, -1)) at = at[name] as Record<string, unknown>;
  at[path.at(-1)!] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), raw);
}

/** Every invitation accept needs a token of its own: a success uses it up. */
async function freshInvitationToken(): Promise<string> {
  lastSnapshot = undefined;
  const created = await call(app.url, '/api/customer-invitations', { apiKey: key, body: { organizationId: ids.organizationId, email: `accept-${next()}@sweep.test` } });
  expect(created.status, created.text).toBe(201);
  return created.body.data.token;
}

async function pathOf(template: string): Promise<string> {
  let path = template.replace(/\{(\w+)\}/g, (_match, name: string) => ids[name] ?? UNKNOWN_UUID);
  if (template.includes('{token}')) path = template.replace('{token}', await freshInvitationToken());
  return `/api${path}`;
}

const STACK_TRACE = /\bat [\w.<>]+ \(|node_modules|\.ts:\d+|Error: .*\n\s+at /;

/** The operations whose rows this file reads back after a success; the rest are held to the envelope and the rows alone. */
const readBackOperations = /^(POST|PUT|PATCH) \/(organizations|projects|customer-invitations|developer\/api-keys|admin\/tenants)/;

/** The value stored for `field`, from the answer when it repeats it, else from its row. */
async function storedValue(name: string, field: string[], data: Record<string, any>): Promise<unknown> {
  if (name === 'POST /admin/tenants') {
    const [row] = field[0] === 'name' ? await sqlAsOwner('select name from tenants where id = $1', [data.tenantId]) : await sqlAsOwner('select name from users where id = $1', [data.userId]);
    return row?.name;
  }
  if (name === 'POST /customer-invitations/{token}/accept') return (await sqlAsOwner('select name from users where id = $1', [data.userId]))[0]?.name;
  return field.reduce<any>((at, key) => at?.[key], data);
}

/** JSON with its keys in order: jsonb orders an object's keys its own way. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, item) => (item && typeof item === 'object' && !Array.isArray(item) ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1))) : item));

/** Whether a success stored what was sent: text as sent, or trimmed where the field trims (an optional one left blank may become null). */
function storedAsSent(stored: unknown, raw: string): boolean {
  const sent = JSON.parse(raw);
  if (typeof sent === 'string') return stored === sent || stored === sent.trim() || (sent.trim() === '' && stored === null);
  return canonical(stored) === canonical(sent);
}

interface Outcome {
  label: string;
  response: ApiResponse;
  changed: boolean;
}

/** What is wrong with one answer: nothing, when it is one the design allows. */
function judge({ label, response, changed }: Outcome, method: string): string[] {
  const problems: string[] = [];
  const summary = `${label} → ${response.status} ${response.text.slice(0, 200)}`;
  if (response.status >= 500) problems.push(`${summary} (a server error)`);
  if (STACK_TRACE.test(response.text)) problems.push(`${summary} (a stack trace)`);
  if (response.status < 400) {
    // A write that succeeded must have written: this also shows the snapshot sees writes.
    if (method !== 'GET' && !changed) problems.push(`${summary} (a success that wrote nothing)`);
    return problems;
  }
  const { success, error } = response.body ?? {};
  if (success !== false || typeof error?.code !== 'string' || typeof error?.message !== 'string') problems.push(`${summary} (not the envelope)`);
  if (changed) problems.push(`${summary} (refused, yet rows changed)`);
  const issues = error?.details?.issues;
  if (error?.code === 'VALIDATION_ERROR' && issues !== undefined && !(Array.isArray(issues) && issues.every((issue) => typeof issue.field === 'string' && typeof issue.issue === 'string'))) {
    problems.push(`${summary} (issues not [{field, issue}])`);
  }
  return problems;
}

/** The rows as the last call left them: between two calls only fixtures write, and they clear it. */
let lastSnapshot: string | undefined;

async function send(label: string, method: string, path: string, rawBody?: string, headers: Record<string, string> = {}): Promise<Outcome> {
  const before = lastSnapshot ?? (await snapshot());
  const response = await call(app.url, path, { method, apiKey: key, headers: { ...(rawBody !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, ...(rawBody !== undefined ? { rawBody } : {}) });
  lastSnapshot = await snapshot();
  return { label, response, changed: lastSnapshot !== before };
}

describe('awkward values in every field of every documented operation', () => {
  it('are refused in the envelope with nothing written, or stored as sent; never a 500 or a stack trace', async () => {
    const { body: document } = await call(app.url, '/api/openapi.json');
    const problems: string[] = [];
    let calls = 0;
    let readBacks = 0;
    for (const { method, template, operation } of documentedOperations<Operation>(document)) {
      const name = `${method} ${template}`;
      const schema = operation.requestBody?.content['application/json']?.schema;
      const fields = schema ? fieldsOf(validBodies[name]?.() ?? bodyFromSchema(schema), schema) : [];
      for (const { path: field, kind } of fields) {
        const values = kind === 'text' ? [...Object.entries(awkwardText).map(([what, text]) => [what, JSON.stringify(text)] as const), ...Object.entries(awkwardNonText)] : Object.entries(awkwardObjects);
        for (const [what, raw] of values) {
          const path = await pathOf(template);
          const outcome = await send(`${name} ${field.join('.')}=${what}`, method, path, withRawAt(validBodies[name]?.() ?? bodyFromSchema(schema!), field, raw));
          calls += 1;
          problems.push(...judge(outcome, method));
          if (outcome.response.status < 300 && readBackOperations.test(name) && !field.includes('password')) {
            readBacks += 1;
            const stored = await storedValue(name, field, outcome.response.body.data);
            if (!storedAsSent(stored, raw)) problems.push(`${outcome.label} → ${outcome.response.status}, stored ${JSON.stringify(stored)?.slice(0, 100)}, not what was sent`);
          }
        }
      }
      for (const parameter of (operation.parameters ?? []).filter((p) => p.in === 'query')) {
        // The lists of an organization need one named, so that the parameter under test is the one judged.
        const organization = parameter.name !== 'organizationId' && /agency-projects|customer-invitations/.test(template) ? `&organizationId=${ids.organizationId}` : '';
        for (const [what, value] of Object.entries(awkwardQuery)) {
          const outcome = await send(`${name} ?${parameter.name}=${what}`, method, `${await pathOf(template)}?${parameter.name}=${value}${organization}`);
          calls += 1;
          problems.push(...judge(outcome, method));
        }
      }
    }
    expect([calls > 500, readBacks > 50]).toEqual([true, true]);
    expect(problems).toEqual([]);
  }, 60_000);

  it('in the tenant and request-id headers are refused in the envelope or ignored, never a 500', async () => {
    const problems: string[] = [];
    const headerValues = ['not-a-uuid', 'x'.repeat(8_000), '\u00ff\u00fe', ' ', UNKNOWN_UUID.toUpperCase(), '00000000-0000-0000-0000-000000000000', `${app.bootstrap.tenantId}, ${app.bootstrap.tenantId}`];
    for (const header of ['X-Tenant-ID', 'X-Request-ID']) {
      for (const value of headerValues) {
        for (const [method, path, body] of [['GET', '/api/projects', undefined], ['POST', '/api/projects', JSON.stringify({ name: 'Header sweep' })]] as const) {
          const outcome = await send(`${method} ${path} ${header}: ${value.slice(0, 40)}`, method, path, body, { [header]: value });
          problems.push(...judge(outcome, method));
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("a project's metadata of numbers written with an exponent", () => {
  const refusedForSize = [400, 'VALIDATION_ERROR', [{ field: 'metadata', issue: 'must be at most 16384 bytes as JSON' }]];
  const outcomeOf = (response: ApiResponse) => [response.status, response.body.error?.code, response.body.error?.details?.issues];

  it('is measured as PostgreSQL gives it back to every list page, not as the 6 bytes of "1e308"', async () => {
    // 60 × "1e308," is 360 bytes of JSON; PostgreSQL keeps jsonb numbers as numeric and writes each back in 309 digits.
    const before = await snapshot();
    const created = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Huge numbers', metadata: { readings: Array(60).fill(1e308) } } });
    expect(outcomeOf(created)).toEqual(refusedForSize);
    const patched = await call(app.url, `/api/projects/${ids.projectId}`, { method: 'PATCH', apiKey: key, body: { metadata: { readings: Array(60).fill(-5e-324) } } });
    expect(outcomeOf(patched)).toEqual(refusedForSize);
    expect(await snapshot()).toBe(before);
  });

  it('is stored as sent while it fits, and what PostgreSQL gives back stays near the cap', async () => {
    const numbers = [1e308, -5e-324, -1.5e-7, 1.7976931348623157e308, 1e21, 123.456];
    const created = await call(app.url, '/api/projects', { apiKey: key, body: { name: 'Numbers that fit', metadata: { numbers, readings: Array(45).fill(1e308) } } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.data.metadata).toEqual({ numbers, readings: Array(45).fill(1e308) });
    const [row] = await sqlAsOwner('select length(metadata::text) as size, array(select length(n::text) from jsonb_array_elements(metadata->\'numbers\') n) as lengths from projects where id = $1', [created.body.data.id]);
    // The lengths the cap counts these numbers at: PostgreSQL's, not JavaScript's 5 to 23 characters.
    expect(row.lengths).toEqual([309, 327, 11, 309, 22, 7]);
    expect(row.size).toBeLessThan(17_000);
  });
});

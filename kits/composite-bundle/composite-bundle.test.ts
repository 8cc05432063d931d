import { readFile } from 'node:fs/promises';
import { unzipSync, strFromU8 } from 'fflate';
import { parse as parseYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOutputBundle } from '../../kit-runtime/index.ts';
import { closeTestRuntime, runKitForTest } from '../../sdk/kit/index.ts';

const kitDir = import.meta.dirname;
const componentDir = (kitId: string) => `${kitDir}/../${kitId}`;
const example = JSON.parse(await readFile(`${kitDir}/examples/acme-rockets.json`, 'utf8'));
afterAll(() => closeTestRuntime());

describe('composite-bundle kit', () => {
  it('runs openapi-api, postgres-schema and project-docs on one input and merges their outputs under prefixes', async () => {
    const result = await runKitForTest(kitDir, example);
    expect(result.status).toBe('completed');
    expect(result.components).toEqual([
      { prefix: 'api', kitRef: 'openapi-api@1.0.7', status: 'completed', message: null },
      { prefix: 'database', kitRef: 'postgres-schema@1.0.8', status: 'completed', message: null },
      { prefix: 'documentation', kitRef: 'project-docs@1.0.5', status: 'completed', message: null },
    ]);
    expect(result.outputs.map((o) => [o.outputId, o.filename, o.status])).toEqual([
      ['index', 'INDEX.md', 'valid'],
      ['api.openapi', 'api/openapi.yaml', 'valid'],
      ['database.ddl', 'database/db/schema.sql', 'valid'],
      ['database.migration', 'database/db/migrations/0001_initial.sql', 'valid'],
      ['database.entity-schema.0', 'database/json-schema/rocket.schema.json', 'valid'],
      ['database.entity-schema.1', 'database/json-schema/launch.schema.json', 'valid'],
      ['database.entity-schema.2', 'database/json-schema/payload-booking.schema.json', 'valid'],
      ['documentation.readme', 'documentation/README.md', 'valid'],
      ['documentation.architecture', 'documentation/docs/architecture.md', 'valid'],
      ['documentation.adr-index', 'documentation/docs/adr/README.md', 'valid'],
      ['documentation.adr.0', 'documentation/docs/adr/0001-record-architecture-decisions.md', 'valid'],
      ['documentation.adr.1', 'documentation/docs/adr/0002-use-postgresql-as-the-system-of-record.md', 'valid'],
      ['documentation.adr.2', 'documentation/docs/adr/0003-expose-a-rest-api-described-by-openapi-3-1.md', 'valid'],
    ]);
    expect(parseYaml(result.output('api.openapi').content).info.title).toBe('Acme Rockets API');
    expect(result.logs.map((l) => l.message)).toContain('[api] OpenAPI for 3 entities: Rocket, Launch, PayloadBooking');

    // The bundle the server would offer: one ZIP with every file under its folder.
    const bundle = await buildOutputBundle(result.outputs, { kitRef: result.kitRef });
    const entries = unzipSync(new Uint8Array(bundle.buffer));
    expect(Object.keys(entries).sort()).toEqual([...result.outputs.map((o) => o.filename), 'manifest.json'].sort());
    expect(strFromU8(entries['database/db/schema.sql']!)).toBe(result.output('database.ddl').content);
  });

  it('fails CHECK for its own missing inputs before running any component', async () => {
    const result = await runKitForTest(kitDir, { businessProfile: { company: { name: 'Acme' } } });
    expect(result.message).toBe('CHECK: missing required inputs: businessProfile.company.industry, discoveryAnswers.entities');
    expect(result.components).toEqual([]);
  });

  it('fails when a component fails, naming it and why', async () => {
    const input = structuredClone(example);
    input.discoveryAnswers.entities[1].fields[1].entity = 'Ghost';
    const result = await runKitForTest(kitDir, input);
    expect(result.status).toBe('failed');
    expect(result.message).toBe('COMPOSE: component "api" (openapi-api@1.0.7) failed: CHECK: CHECK failed: field Launch.rocketId references unknown entity "Ghost"');
  });

  // The components check their input each on its own; the bundle is only usable if they agree.
  it('has openapi-api and postgres-schema pass or refuse the same maxLength, with the same message', async () => {
    const withField = (field: Record<string, unknown>) => ({
      businessProfile: { company: { name: 'Acme', industry: 'Aerospace' } },
      discoveryAnswers: { entities: [{ name: 'Item', fields: [{ name: 'code', ...field }] }] },
    });
    const fromOneTo = '; it must be a whole number from 1 to 10485760';
    const cases: Array<[Record<string, unknown>, string | null]> = [
      [{ type: 'string', maxLength: 1 }, null],
      [{ type: 'string', maxLength: 10485760 }, null],
      [{ type: 'string' }, null],
      [{ type: 'integer' }, null],
      [{ type: 'string', maxLength: 0 }, `has maxLength 0${fromOneTo}`],
      [{ type: 'string', maxLength: 10485761 }, `has maxLength 10485761${fromOneTo}`],
      [{ type: 'string', maxLength: 20000000 }, `has maxLength 20000000${fromOneTo}`],
      [{ type: 'string', maxLength: 2.5 }, `has maxLength 2.5${fromOneTo}`],
      [{ type: 'string', maxLength: -5 }, `has maxLength -5${fromOneTo}`],
      [{ type: 'string', maxLength: '120' }, `has maxLength "120"${fromOneTo}`],
      [{ type: 'integer', maxLength: 2.5 }, 'has maxLength 2.5, but only a field of type "string" takes one'],
      [{ type: 'integer', maxLength: 10 }, 'has maxLength 10, but only a field of type "string" takes one'],
      [{ type: 'email', maxLength: 254 }, 'has maxLength 254, but only a field of type "string" takes one'],
    ];
    const check = async (kitId: string, field: Record<string, unknown>) => {
      const run = await runKitForTest(componentDir(kitId), withField(field), { dryRun: true });
      return [run.status, run.message];
    };
    const outcomes = [];
    for (const [field] of cases) outcomes.push({ field, api: await check('openapi-api', field), database: await check('postgres-schema', field) });
    // Both pass or both fail, case by case; then, that each is the outcome the rule gives.
    expect(outcomes.map((o) => [o.field, o.database[0]])).toEqual(outcomes.map((o) => [o.field, o.api[0]]));
    expect(outcomes.map((o) => [o.field, o.database[1]])).toEqual(outcomes.map((o) => [o.field, o.api[1]]));
    expect(outcomes.map((o) => [o.field, ...o.api])).toEqual(cases.map(([field, problem]) =>
      [field, ...(problem === null ? ['completed', null] : ['failed', `CHECK: CHECK failed: field Item.code ${problem}`])]));
  });

  it('has openapi-api, postgres-schema and project-docs refuse the same field and entity of the wrong type at CHECK, with the same message', async () => {
    const withField = (field: Record<string, unknown>, entity: Record<string, unknown> = {}) => ({
      businessProfile: { company: { name: 'Acme', industry: 'Aerospace' } },
      discoveryAnswers: { entities: [{ name: 'Item', ...entity, fields: [{ name: 'code', ...field }] }, 'Owner'] },
    });
    const at = 'discoveryAnswers.entities[0]';
    const cases: Array<[Record<string, unknown>, Record<string, unknown>, string | null]> = [
      [{ type: 'enum', values: ['a', 'b'] }, {}, null],
      [{ type: 'reference', entity: 'owner' }, { description: 'An item.' }, null],
      [{ type: 'string' }, { description: { text: 'An item.' } }, `${at}.description must be text, not an object`],
      [{ type: 7 }, {}, `${at}.fields[0].type must be text, not a number`],
      [{ type: 'string', description: ['a'] }, {}, `${at}.fields[0].description must be text, not a list`],
      [{ type: 'enum', values: ['a', 2] }, {}, `${at}.fields[0].values[1] must be text, not a number`],
      [{ type: 'enum', values: 'a,b' }, {}, 'field Item.code is an enum without values'],
      [{ type: 'reference', entity: 'Ghost' }, {}, 'field Item.code references unknown entity "Ghost"'],
      [{ type: 'reference' }, {}, `${at}.fields[0].entity is missing: a reference names the entity it points to`],
      [{ type: 'reference', entity: ['Owner'] }, {}, `${at}.fields[0].entity must be text, not a list`],
    ];
    const outcomes = [];
    for (const [field, entity] of cases) {
      const outcome = [];
      for (const kitId of ['openapi-api', 'postgres-schema', 'project-docs']) {
        const run = await runKitForTest(componentDir(kitId), withField(field, entity), { dryRun: true });
        outcome.push([kitId, run.status, run.message]);
      }
      outcomes.push(outcome);
    }
    expect(outcomes).toEqual(cases.map(([, , problem]) => ['openapi-api', 'postgres-schema', 'project-docs'].map((kitId) =>
      [kitId, ...(problem === null ? ['completed', null] : ['failed', `CHECK: CHECK failed: ${problem}`])])));
  });
});

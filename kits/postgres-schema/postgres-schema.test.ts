import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestRuntime, runKitForTest, type KitTestResult } from '../../sdk/kit/index.ts';
import { ACRONYMS, acronymInput } from '../naming-cases.ts';
import { createTestDatabase } from '../../test/helpers/test-database.ts';

const kitDir = import.meta.dirname;
const example = JSON.parse(await readFile(`${kitDir}/examples/acme-rockets.json`, 'utf8'));
let client: pg.Client;
let result: KitTestResult;

beforeAll(async () => {
  const database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.ownerUrl });
  await client.connect();
  result = await runKitForTest(kitDir, example);
});
afterAll(async () => {
  await client.end();
  closeTestRuntime();
});

/** Runs SQL in a schema of its own, so the generated tables meet nothing else. */
async function applyIn(schema: string, sql: string): Promise<void> {
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.query(`SET search_path TO "${schema}"`);
  try {
    await client.query(sql);
  } finally {
    await client.query('SET search_path TO public');
  }
}

async function columnsOf(schema: string): Promise<string[]> {
  const { rows } = await client.query(
    `SELECT table_name || '.' || column_name || ':' || data_type || ':' || is_nullable AS c FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
    [schema],
  );
  return rows.map((r) => r.c);
}

describe('postgres-schema kit', () => {
  it('renders valid outputs: the DDL, the migration and a JSON Schema per entity', () => {
    expect(result.status).toBe('completed');
    expect(result.outputs.map((o) => [o.outputId, o.filename, o.status])).toEqual([
      ['ddl', 'db/schema.sql', 'valid'],
      ['migration', 'db/migrations/0001_initial.sql', 'valid'],
      ['entity-schema.0', 'json-schema/rocket.schema.json', 'valid'],
      ['entity-schema.1', 'json-schema/launch.schema.json', 'valid'],
      ['entity-schema.2', 'json-schema/payload-booking.schema.json', 'valid'],
    ]);
  });

  it('applies the DDL to a real PostgreSQL: tables, types, constraints and foreign keys exist and hold', async () => {
    await applyIn('ddl', result.output('ddl').content);
    const { rows: tables } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'ddl' ORDER BY table_name`);
    expect(tables.map((r) => r.table_name)).toEqual(['launches', 'payload_bookings', 'rockets']);
    const columns = await columnsOf('ddl');
    expect(columns).toEqual(expect.arrayContaining([
      'rockets.id:uuid:NO',
      'rockets.name:character varying:NO',
      'rockets.payload_capacity_kg:numeric:NO',
      'rockets.commissioned_on:date:YES',
      'launches.rocket_id:uuid:NO',
      'launches.scheduled_at:timestamp with time zone:NO',
      'launches.crewed:boolean:YES',
      'payload_bookings.customer_email:text:NO',
      'payload_bookings.slots:integer:YES',
      'payload_bookings.created_at:timestamp with time zone:NO',
    ]));
    const { rows: fks } = await client.query(`SELECT conname FROM pg_constraint WHERE contype = 'f' AND connamespace = 'ddl'::regnamespace ORDER BY conname`);
    expect(fks.map((r) => r.conname)).toEqual(['launches_rocket_id_fkey', 'payload_bookings_launch_id_fkey']);

    await client.query('SET search_path TO ddl');
    try {
      const rocket = await client.query(`INSERT INTO rockets (name, payload_capacity_kg, status) VALUES ('Vega', 1500, 'in-service') RETURNING id`);
      await client.query(`INSERT INTO launches (rocket_id, scheduled_at, site) VALUES ($1, now(), 'Kourou')`, [rocket.rows[0].id]);
      await expect(client.query(`INSERT INTO launches (rocket_id, scheduled_at, site) VALUES (gen_random_uuid(), now(), 'X')`)).rejects.toThrow(/launches_rocket_id_fkey/);
      await expect(client.query(`INSERT INTO rockets (name, payload_capacity_kg, status) VALUES ('Bad', 1, 'exploded')`)).rejects.toThrow(/check constraint/);
      await expect(client.query(`INSERT INTO rockets (name, payload_capacity_kg, status) VALUES ('${'x'.repeat(121)}', 1, 'retired')`)).rejects.toThrow(/too long/);
    } finally {
      await client.query('SET search_path TO public');
    }
  });

  it('applies the migration to another schema with the same tables, and refuses to apply it twice', async () => {
    await applyIn('migrated', result.output('migration').content);
    expect((await columnsOf('migrated')).filter((c) => !c.startsWith('schema_migrations.'))).toEqual(await columnsOf('ddl'));
    const { rows } = await client.query('SELECT version FROM migrated.schema_migrations');
    expect(rows).toEqual([{ version: '0001_initial' }]);
    await client.query('SET search_path TO migrated');
    try {
      await expect(client.query(result.output('migration').content)).rejects.toThrow(/duplicate key/);
      await client.query('ROLLBACK');
    } finally {
      await client.query('SET search_path TO public');
    }
  });

  it('produces JSON Schemas that describe the rows', () => {
    expect(result.parsed('entity-schema.2')).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'PayloadBooking',
      required: ['id', 'launchId', 'customerEmail', 'massKg', 'createdAt', 'updatedAt'],
      properties: { launchId: { type: 'string', format: 'uuid' }, customerEmail: { type: 'string', format: 'email' }, slots: { type: ['integer', 'null'] } },
      additionalProperties: false,
    });
  });

  it('takes names that JavaScript objects carry themselves (constructor, toString, valueOf) as the ordinary names they are', async () => {
    const formulaOne = await runKitForTest(kitDir, {
      discoveryAnswers: {
        entities: [
          // A type no table knows is text, whatever name Object.prototype gives it.
          { name: 'Constructor', fields: [{ name: 'name', type: 'string', required: true }, { name: 'toString', type: 'string' }, { name: 'valueOf', type: 'integer' }, { name: 'note', type: 'constructor' }, { name: 'memo', type: '__proto__' }] },
          { name: 'Driver', fields: [{ name: 'team', type: 'reference', entity: 'Constructor' }, { name: 'constructor', type: 'reference', entity: 'Constructor' }] },
        ],
      },
    });
    expect([formulaOne.status, formulaOne.message]).toEqual(['completed', null]);
    await applyIn('formula_one', formulaOne.output('ddl').content);
    expect(await columnsOf('formula_one')).toEqual(
      expect.arrayContaining(['constructors.to_string:text:YES', 'constructors.value_of:integer:YES', 'constructors.note:text:YES', 'constructors.memo:text:YES', 'drivers.team:uuid:YES', 'drivers.constructor:uuid:YES']),
    );
    expect((formulaOne.parsed('entity-schema.0') as { properties: Record<string, unknown> }).properties).toMatchObject({ note: { type: ['string', 'null'] }, memo: { type: ['string', 'null'] } });
  });

  it('quotes identifiers and escapes literals, so hostile answers stay data', async () => {
    const hostile = await runKitForTest(kitDir, {
      discoveryAnswers: { entities: [{ name: 'User"; DROP TABLE x; --', fields: [{ name: 'role', type: 'enum', values: ["admin'); DROP TABLE y; --", 'member'], required: true }] }] },
    });
    expect(hostile.status).toBe('completed');
    await applyIn('hostile', hostile.output('ddl').content);
    const { rows } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'hostile'`);
    expect(rows).toEqual([{ table_name: 'user_drop_table_xes' }]);
    await client.query(`INSERT INTO hostile.user_drop_table_xes (role) VALUES ($1)`, ["admin'); DROP TABLE y; --"]);
  });

  it('keeps the company name inside its SQL comments, even with line breaks, quotes and parentheses', async () => {
    const injected = await runKitForTest(kitDir, {
      businessProfile: { company: { name: "Bob's Rockets :)\nDROP TABLE victims; --\r\nCREATE TABLE injected (x int); --" } },
      discoveryAnswers: { entities: ['Rocket'] },
    });
    expect(injected.status).toBe('completed');
    expect(injected.outputs.map((o) => [o.outputId, o.status, o.validationErrors])).toEqual([
      ['ddl', 'valid', []], ['migration', 'valid', []], ['entity-schema.0', 'valid', []],
    ]);
    for (const id of ['ddl', 'migration']) {
      const sql = injected.output(id).content;
      expect(sql.split('\n').filter((line) => /DROP|injected/.test(line)).every((line) => line.startsWith('-- '))).toBe(true);
      await applyIn(`comment_${id}`, 'CREATE TABLE victims (x int)');
      await client.query(`SET search_path TO "comment_${id}"`);
      try {
        await client.query(sql);
      } finally {
        await client.query('SET search_path TO public');
      }
      const { rows } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [`comment_${id}`]);
      expect(rows.map((r) => r.table_name)).toEqual(id === 'ddl' ? ['rockets', 'victims'] : ['rockets', 'schema_migrations', 'victims']);
    }
  });

  it('fails CHECK, listing each, for names that collide once reduced to identifiers and for fields PostgreSQL cannot take', async () => {
    const result = await runKitForTest(kitDir, {
      discoveryAnswers: {
        entities: [
          'Payload Booking', 'PayloadBooking', 'Größe', 'Grosse', 'SchemaMigration',
          {
            name: 'User',
            fields: [
              { name: 'firstName', type: 'string' }, { name: 'first_name', type: 'string' }, { name: 'aB', type: 'string' }, { name: 'AB', type: 'string' },
              { name: 'createdAt', type: 'datetime' }, { name: 'role', type: 'enum', values: [] },
              { name: 'bio', type: 'string', maxLength: 20000000 }, { name: 'motto', type: 'string', maxLength: -1 }, null, { type: 'string' },
              { name: 'id', type: 'uuid' }, { name: 'ID', type: 'uuid' }, { name: 'active', type: 'boolean', required: 'yes' },
            ],
          },
        ],
      },
    });
    expect(result.status).toBe('failed');
    expect(result.outputs).toEqual([]);
    expect(result.message).toBe('CHECK: CHECK failed: ' + [
      'entity "PayloadBooking" and entity "Payload Booking" both become table "payload_bookings"',
      'entity "Grosse" and entity "Größe" both become table "grosses"',
      'entity "SchemaMigration" and the migration table both become table "schema_migrations"',
      'field User.first_name and field User.firstName both become column "first_name"',
      'field User.first_name and field User.firstName both become property "firstName"',
      'field User.createdAt and the timestamp created_at both become column "created_at"',
      'field User.createdAt and the timestamp createdAt both become property "createdAt"',
      'field User.role is an enum without values',
      'field User.bio has maxLength 20000000; it must be a whole number from 1 to 10485760',
      'field User.motto has maxLength -1; it must be a whole number from 1 to 10485760',
      'entity User: fields[8] has no name',
      'entity User: fields[9] has no name',
      'field User.ID and field User.id both become the primary key "id"',
      'field User.active has required "yes"; it must be true or false',
    ].join('; '));
  });

  it('keeps long foreign key and index names distinct within PostgreSQL\'s 63 characters', async () => {
    const target = 'Rocket';
    const result = await runKitForTest(kitDir, {
      discoveryAnswers: { entities: [target, { name: 'y'.repeat(28), fields: [{ name: `ref${'a'.repeat(40)}One`, type: 'reference', entity: target }, { name: `ref${'a'.repeat(40)}Two`, type: 'reference', entity: target }] }] },
    });
    expect(result.status).toBe('completed');
    await applyIn('long_names', result.output('ddl').content);
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = 'long_names'::regnamespace`);
    expect(rows).toEqual([{ n: 2 }]);
  });

  it('gives long entity and field names that differ only past 63 characters tables and columns of their own, cut to 63 characters', async () => {
    const start = 'Very Long Name That Goes On And On For Ever And Ever And Ever Again ';
    const run = await runKitForTest(kitDir, {
      discoveryAnswers: {
        entities: [
          `${start}Alpha`,
          { name: `${start}Beta`, fields: [{ name: `${start}Owner One`, type: 'reference', entity: `${start}Alpha` }, { name: `${start}Owner Two`, type: 'string', required: true }] },
        ],
      },
    });
    expect([run.status, run.message]).toEqual(['completed', null]);
    for (const id of ['ddl', 'migration']) await applyIn(`long_${id}`, run.output(id).content);
    const columns = (await columnsOf('long_ddl')).filter((c) => !/\.(id|created_at|updated_at):/.test(c));
    const long = 'very_long_name_that_goes_on_and_on_for_ever_and_ever_a_[0-9a-f]{8}';
    expect(columns).toHaveLength(3);
    expect(columns).toEqual(expect.arrayContaining([
      expect.stringMatching(new RegExp(`^${long}\\.name:text:NO$`)),
      expect.stringMatching(new RegExp(`^${long}\\.${long}:uuid:YES$`)),
      expect.stringMatching(new RegExp(`^${long}\\.${long}:text:NO$`)),
    ]));
    // Two tables and two columns, each its own, each cut to exactly 63 characters.
    const names = new Set(columns.flatMap((c) => c.split(':')[0]!.split('.')).filter((name) => name !== 'name'));
    expect([...names].map((name) => name.length)).toEqual([63, 63, 63, 63]);
    expect((await columnsOf('long_migration')).filter((c) => !c.startsWith('schema_migrations.'))).toEqual(await columnsOf('long_ddl'));
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND connamespace = 'long_ddl'::regnamespace`);
    expect(rows).toEqual([{ n: 1 }]);
  });

  it('keeps index and foreign key names distinct when a table and a column meet another pair (users.roles_owner, users_roles.owner)', async () => {
    const meeting = await runKitForTest(kitDir, {
      discoveryAnswers: {
        entities: [
          { name: 'User', fields: [{ name: 'Roles Owner', type: 'reference', entity: 'User' }] },
          { name: 'Users Role', fields: [{ name: 'Owner', type: 'reference', entity: 'User' }] },
        ],
      },
    });
    expect(meeting.status).toBe('completed');
    await applyIn('meeting_ddl', meeting.output('ddl').content);
    await applyIn('meeting_migration', meeting.output('migration').content);
    for (const schema of ['meeting_ddl', 'meeting_migration']) {
      const { rows } = await client.query(`SELECT tablename || '.' || indexname AS i FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%\\_idx%' ORDER BY tablename`, [schema]);
      expect(rows.map((r) => r.i)).toEqual([expect.stringMatching(/^users\.users_roles_owner_idx$/), expect.stringMatching(/^users_roles\.users_roles_owner_idx_[0-9a-f]{8}$/)]);
    }
  });

  it('names the key and properties of fields called ID or URL id and url, and keeps accented letters', async () => {
    const run = await runKitForTest(kitDir, {
      discoveryAnswers: { entities: [{ name: 'Ünïcode Thing', fields: [{ name: 'ID', type: 'uuid' }, { name: 'URL', type: 'string', required: true }, { name: 'Größe', type: 'integer' }, { name: 'homePageURL', type: 'string' }] }] },
    });
    expect([run.status, run.message]).toEqual(['completed', null]);
    const schema = run.parsed('entity-schema.0') as { title: string; properties: Record<string, unknown>; required: string[] };
    expect(schema.title).toBe('UnicodeThing');
    expect(Object.keys(schema.properties)).toEqual(['id', 'url', 'grosse', 'homePageURL', 'createdAt', 'updatedAt']);
    expect(schema.required).toEqual(['id', 'url', 'createdAt', 'updatedAt']);
    expect(run.output('entity-schema.0').filename).toBe('json-schema/unicode-thing.schema.json');
    await applyIn('acronyms', run.output('ddl').content);
    expect(await columnsOf('acronyms')).toEqual([
      'unicode_things.id:uuid:NO', 'unicode_things.url:text:NO', 'unicode_things.grosse:integer:YES', 'unicode_things.home_page_url:text:YES',
      'unicode_things.created_at:timestamp with time zone:NO', 'unicode_things.updated_at:timestamp with time zone:NO',
    ]);
  });

  it('fails CHECK for a field PostgreSQL reserves as a system column (xmin, ctid …), which no quoting saves; x_min is a column of its own', async () => {
    // Before: the run completed, and PostgreSQL refused the whole script: column name "xmin"
    // conflicts with a system column name.
    const refused = await runKitForTest(kitDir, {
      discoveryAnswers: { entities: [{ name: 'Tile', fields: [{ name: 'xmin', type: 'number' }, { name: 'XMax', type: 'number' }, { name: 'ctid', type: 'string' }, { name: 'TableOID', type: 'integer' }] }] },
      // (`TableOID` is column `table_oid`, which PostgreSQL takes.)
    });
    expect([refused.status, refused.outputs]).toEqual(['failed', []]);
    const reserved = 'which PostgreSQL reserves for a system column (tableoid, xmin, cmin, xmax, cmax, ctid)';
    expect(refused.message).toBe('CHECK: CHECK failed: ' + [
      `field Tile.xmin becomes column "xmin", ${reserved}`,
      `field Tile.XMax becomes column "xmax", ${reserved}`,
      `field Tile.ctid becomes column "ctid", ${reserved}`,
    ].join('; '));
    await expect(applyIn('system_columns', 'CREATE TABLE tiles ("xmin" numeric)')).rejects.toThrow(/conflicts with a system column name/);

    // A single capital is not a word of its own (`XMax` is one word, `xmax`, refused above), but
    // two capitals before a capital and a lower-case letter are (`XYMax` → `xy_max`).
    const renamed = await runKitForTest(kitDir, { discoveryAnswers: { entities: [{ name: 'Tile', fields: [{ name: 'xMin', type: 'number' }, { name: 'x max', type: 'number' }, { name: 'XYMax', type: 'number' }] }] } });
    expect([renamed.status, renamed.message]).toEqual(['completed', null]);
    await applyIn('bounding_box', renamed.output('ddl').content);
    expect(await columnsOf('bounding_box')).toEqual(expect.arrayContaining(['tiles.x_min:numeric:YES', 'tiles.x_max:numeric:YES', 'tiles.xy_max:numeric:YES']));
  });

  it('fails CHECK for a field named id of a type other than uuid, instead of dropping it for the uuid key', async () => {
    // Before: the integer `id` was left out for `"id" uuid`, while openapi-api described an integer key.
    const run = await runKitForTest(kitDir, {
      discoveryAnswers: { entities: [{ name: 'Rocket', fields: [{ name: 'id', type: 'integer' }, { name: 'name', type: 'string' }] }, { name: 'Launch', fields: [{ name: 'Id' }, { name: 'site', type: 'string' }] }] },
    });
    expect([run.status, run.message]).toEqual(['failed', 'CHECK: CHECK failed: field Rocket.id has type "integer", but the primary key id is always a uuid']);
  });

  it('spells Latin letters that have no accent to drop (Æ, Ø, Ł, Œ, Þ) as their usual letters in tables, columns, properties and file names', async () => {
    // Before: `Ærø` became table `rs`, `Łódź` `odzes` and the column `Øre` `re`.
    const run = await runKitForTest(kitDir, {
      discoveryAnswers: { entities: [{ name: 'Ærø', fields: [{ name: 'Øre', type: 'integer' }, { name: 'ŒUVRE', type: 'string' }, { name: 'Þing Số', type: 'string' }] }, 'Łódź'] },
    });
    expect([run.status, run.message]).toEqual(['completed', null]);
    expect(run.outputs.map((o) => o.filename)).toEqual(['db/schema.sql', 'db/migrations/0001_initial.sql', 'json-schema/aero.schema.json', 'json-schema/lodz.schema.json']);
    await applyIn('whole_letters', run.output('ddl').content);
    expect(await columnsOf('whole_letters')).toEqual(expect.arrayContaining(['aeros.ore:integer:YES', 'aeros.oeuvre:text:YES', 'aeros.thing_so:text:YES', 'lodzes.name:text:NO']));
    expect(Object.keys((run.parsed('entity-schema.0') as { properties: object }).properties)).toEqual(['id', 'ore', 'oeuvre', 'thingSo', 'createdAt', 'updatedAt']);
  });

  it('keeps the JSON Schema file name of a very long entity name within 255 bytes: its start and a hash of the whole', async () => {
    const name = `${'Very Long Entity Name '.repeat(15)}End`;
    expect(name.length).toBe(333);
    const run = await runKitForTest(kitDir, { discoveryAnswers: { entities: [name] } });
    expect([run.status, run.message]).toEqual(['completed', null]);
    const output = run.output('entity-schema.0');
    expect(output.status).toBe('valid');
    expect(output.filename).toMatch(/^json-schema\/(very-long-entity-name-){5}v-[0-9a-f]{8}\.schema\.json$/);
    expect(Buffer.byteLength(output.filename.split('/')[1]!)).toBeLessThanOrEqual(255);
  });

  it('fails CHECK for missing entities and for references to unknown entities', async () => {
    const missing = await runKitForTest(kitDir, { projectId: 'p' });
    expect(missing.message).toBe('CHECK: missing required inputs: discoveryAnswers.entities');
    const dangling = await runKitForTest(kitDir, { discoveryAnswers: { entities: [{ name: 'Launch', fields: [{ name: 'rocketId', type: 'reference', entity: 'Rocket' }] }] } });
    expect(dangling.message).toBe('CHECK: CHECK failed: field Launch.rocketId references unknown entity "Rocket"');
  });

  it('fails CHECK, naming the input path, for descriptions, types, enum values and references that are not text', async () => {
    const run = await runKitForTest(kitDir, {
      businessProfile: { company: { name: ['Acme'] } },
      discoveryAnswers: {
        entities: [
          { name: 'Rocket', description: { text: 'Reusable' } },
          {
            name: 'Launch',
            fields: [
              { name: 'status', type: 'enum', values: ['planned', 3, null] },
              { name: 'note', type: 5, description: ['A', 'note'] },
              { name: 'crewId', type: 'reference' },
              { name: 'vehicleId', type: 'reference', entity: ['Rocket'] },
              { name: 'rocketId', type: 'reference', entity: 'rocket' },
            ],
          },
        ],
      },
    });
    expect([run.status, run.outputs]).toEqual(['failed', []]);
    expect(run.message).toBe('CHECK: CHECK failed: ' + [
      'businessProfile.company.name must be text, not a list',
      'discoveryAnswers.entities[0].description must be text, not an object',
      'discoveryAnswers.entities[1].fields[0].values[1] must be text, not a number',
      'discoveryAnswers.entities[1].fields[0].values[2] must be text, not null',
      'discoveryAnswers.entities[1].fields[1].type must be text, not a number',
      'discoveryAnswers.entities[1].fields[1].description must be text, not a list',
      'discoveryAnswers.entities[1].fields[2].entity is missing: a reference names the entity it points to',
      'discoveryAnswers.entities[1].fields[3].entity must be text, not a list',
    ].join('; '));
  });

  it('applies to PostgreSQL with reserved words, quotes, backslashes, dollar quotes and accents in names, descriptions and enum values', async () => {
    const values = ["it's", '$$', '$tag$', '\\', "\\'", 'é', ''];
    const run = await runKitForTest(kitDir, {
      businessProfile: { company: { name: "O'Brien \\ $$ (Inc" } },
      discoveryAnswers: {
        entities: [
          { name: 'select', description: "it's $$ \\ $tag$ ''", fields: [{ name: 'from', type: 'string', required: true }, { name: 'where"q', type: 'enum', values, required: true }, { name: 'user', type: 'reference', entity: 'ORDER' }] },
          { name: 'order', description: 'line\nbreak -- not a comment', fields: [{ name: 'group', type: 'boolean' }, { name: 'Größe', type: 'number' }] },
        ],
      },
    });
    expect(run.status).toBe('completed');
    await applyIn('reserved', run.output('ddl').content);
    expect(await columnsOf('reserved')).toEqual(expect.arrayContaining(['selects.from:text:NO', 'selects.where_q:text:NO', 'selects.user:uuid:YES', 'orders.group:boolean:YES', 'orders.grosse:numeric:YES']));
    for (const value of values) await client.query('INSERT INTO reserved.selects ("from", where_q) VALUES ($1, $2)', ['x', value]);
    await expect(client.query('INSERT INTO reserved.selects ("from", where_q) VALUES ($1, $2)', ['x', 'other'])).rejects.toThrow(/check constraint/);
    const { rows } = await client.query(`SELECT obj_description('reserved.selects'::regclass) AS a, obj_description('reserved.orders'::regclass) AS b`);
    expect(rows).toEqual([{ a: "it's $$ \\ $tag$ ''", b: 'line\nbreak -- not a comment' }]);
  });

  it('fails CHECK, naming the input path, for a NUL character in text the DDL prints (PostgreSQL refuses the whole script)', async () => {
    const run = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Acme\u0000' } },
      discoveryAnswers: {
        entities: [
          { name: 'Rocket', description: 'Reus\u0000able', fields: [{ name: 'status', type: 'enum', values: ['ok', 'b\u0000d'], description: 'JSON carries \u0000 escaped' }] },
        ],
      },
    });
    expect([run.status, run.outputs]).toEqual(['failed', []]);
    expect(run.message).toBe('CHECK: CHECK failed: ' + [
      'businessProfile.company.name contains a NUL character (\\u0000), which PostgreSQL cannot store',
      'discoveryAnswers.entities[0].description contains a NUL character (\\u0000), which PostgreSQL cannot store',
      'discoveryAnswers.entities[0].fields[0].values[1] contains a NUL character (\\u0000), which PostgreSQL cannot store',
    ].join('; '));
  });

  it('keeps updated_at current: an UPDATE sets it to the time of the update, in the DDL and the migration alike', async () => {
    // Before: updated_at had a default and nothing else, so it kept the insert's time for ever.
    for (const id of ['ddl', 'migration']) {
      const schema = `touched_${id}`;
      await applyIn(schema, result.output(id).content);
      const { rows: [inserted] } = await client.query(`INSERT INTO "${schema}".rockets (name, payload_capacity_kg, status) VALUES ('Vega', 1500, 'in-service') RETURNING id, created_at, updated_at`);
      expect(inserted.updated_at).toEqual(inserted.created_at);
      await new Promise((resolve) => setTimeout(resolve, 20));
      // Each statement is its own transaction, so now() has moved on; a stale value given by hand is replaced too.
      const { rows: [updated] } = await client.query(`UPDATE "${schema}".rockets SET status = 'retired', updated_at = '2000-01-01' WHERE id = $1 RETURNING created_at, updated_at`, [inserted.id]);
      expect(updated.created_at).toEqual(inserted.created_at);
      expect(updated.updated_at.getTime()).toBeGreaterThan(inserted.updated_at.getTime());
      const { rows: triggers } = await client.query(`SELECT event_object_table AS t FROM information_schema.triggers WHERE trigger_schema = $1 AND trigger_name = 'set_updated_at' ORDER BY 1`, [schema]);
      expect(triggers.map((r) => r.t)).toEqual(['launches', 'payload_bookings', 'rockets']);
    }
  });

  it('writes literals PostgreSQL reads alike with standard_conforming_strings off: a backslash cannot end one early and run the rest as SQL', async () => {
    // Before: with the setting off, '\'' ended the description's literal after `\'` and the
    // CREATE TABLE after it ran (here the enum value `\'` makes the script fail to parse first);
    // the enum value a\b was checked as ab, and the email check's \s was the letter s, so it
    // refused every address with an s in it.
    const description = "\\'; CREATE TABLE injected (x int); --";
    const values = ['a\\b', "\\'", '\\', 'plain'];
    const run = await runKitForTest(kitDir, {
      discoveryAnswers: { entities: [{ name: 'Note', description, fields: [{ name: 'kind', type: 'enum', values, required: true }, { name: 'author', type: 'email' }] }] },
    });
    expect([run.status, run.message]).toEqual(['completed', null]);
    for (const id of ['ddl', 'migration']) {
      const schema = `nonconforming_${id}`;
      await client.query('SET standard_conforming_strings = off');
      try {
        await applyIn(schema, run.output(id).content);
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        await client.query('SET standard_conforming_strings = on');
      }
      const { rows: tables } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`, [schema]);
      expect(tables.map((r) => r.table_name)).toEqual(id === 'ddl' ? ['notes'] : ['notes', 'schema_migrations']);
      const { rows: [comment] } = await client.query(`SELECT obj_description($1::regclass) AS c`, [`${schema}.notes`]);
      expect(comment.c).toBe(description);
      for (const value of values) await client.query(`INSERT INTO "${schema}".notes (kind, author) VALUES ($1, 'sam@example.com')`, [value]);
      await expect(client.query(`INSERT INTO "${schema}".notes (kind) VALUES ('ab')`)).rejects.toThrow(/check constraint/);
      await expect(client.query(`INSERT INTO "${schema}".notes (kind, author) VALUES ('plain', 'sam smith@example.com')`)).rejects.toThrow(/check constraint/);
    }
  });

  it('bounds integer properties in the JSON Schema to the integer column\'s range', async () => {
    // Before: the schema said `{type: integer}`, so 3000000000 passed it and the INSERT failed.
    const schema = result.parsed('entity-schema.2') as { properties: Record<string, { minimum: number; maximum: number }> };
    expect(schema.properties.slots).toEqual({ type: ['integer', 'null'], minimum: -2147483648, maximum: 2147483647 });
    const { minimum, maximum } = schema.properties.slots!;
    await applyIn('int_range', result.output('ddl').content);
    const { rows: [rocket] } = await client.query(`INSERT INTO int_range.rockets (name, payload_capacity_kg, status) VALUES ('Vega', 1500, 'in-service') RETURNING id`);
    const { rows: [launch] } = await client.query(`INSERT INTO int_range.launches (rocket_id, scheduled_at, site) VALUES ($1, now(), 'Kourou') RETURNING id`, [rocket.id]);
    const book = (slots: number) => client.query(`INSERT INTO int_range.payload_bookings (launch_id, customer_email, mass_kg, slots) VALUES ($1, 'ops@example.com', 10, $2)`, [launch.id, slots]);
    await book(minimum);
    await book(maximum);
    await expect(book(maximum + 1)).rejects.toThrow(/out of range/);
    await expect(book(minimum - 1)).rejects.toThrow(/out of range/);
  });

  it('names tables with the English plural of the last word (people, children, analyses, quizzes …), and refuses two entities whose plurals meet', async () => {
    // Before: persons, childs, care_childs, analysises, quizes, heros, knifes, newses, user_settingses.
    const run = await runKitForTest(kitDir, {
      discoveryAnswers: {
        entities: ['Person', 'Child', { name: 'Care Child', fields: [{ name: 'guardian', type: 'reference', entity: 'Person' }] }, 'Analysis', 'Quiz', 'Hero', 'Knife', 'News', 'User Settings', 'Status', 'Photo', 'Roof'],
      },
    });
    expect([run.status, run.message]).toEqual(['completed', null]);
    await applyIn('plurals', run.output('ddl').content);
    const { rows } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'plurals' ORDER BY table_name`);
    expect(rows.map((r) => r.table_name)).toEqual(['analyses', 'care_children', 'children', 'heroes', 'knives', 'news', 'people', 'photos', 'quizzes', 'roofs', 'statuses', 'user_settings']);
    const { rows: fks } = await client.query(`SELECT conname FROM pg_constraint WHERE contype = 'f' AND connamespace = 'plurals'::regnamespace`);
    expect(fks).toEqual([{ conname: 'care_children_guardian_fkey' }]);
    // Person and People now meet at one table, refused as any other two names that do.
    const meeting = await runKitForTest(kitDir, { discoveryAnswers: { entities: ['Person', 'People', 'Child', 'Children', 'Mouse', 'Mice'] } });
    expect([meeting.status, meeting.message]).toEqual(['failed', 'CHECK: CHECK failed: ' + [
      'entity "People" and entity "Person" both become table "people"',
      'entity "Children" and entity "Child" both become table "children"',
      'entity "Mice" and entity "Mouse" both become table "mice"',
    ].join('; ')]);
  });


  it('splits a run of capitals before its last one when a lower-case letter follows, in tables, columns, properties and file names (APIKey → api_keys, api_key, apiKey)', async () => {
    const outcomes = [];
    for (const [name] of ACRONYMS) {
      const run = await runKitForTest(kitDir, acronymInput(name), { dryRun: true });
      expect([name, run.status, run.message]).toEqual([name, 'completed', null]);
      const ddl = run.output('ddl').content;
      const [, table, body] = /^CREATE TABLE "([a-z0-9_]+)" \(\n([\s\S]*?)\n\);/m.exec(ddl)!;
      const columns = [...body!.matchAll(/^ {2}"([a-z0-9_]+)"/gm)].map((m) => m[1]);
      const properties = Object.keys((run.parsed('entity-schema.0') as { properties: object }).properties);
      outcomes.push([name, table, columns, properties, run.output('entity-schema.0').filename]);
    }
    expect(outcomes).toEqual(ACRONYMS.map(([name, , table, column, property]) => [
      name, table, [...new Set(['id', column, 'created_at', 'updated_at'])], [...new Set(['id', property, 'createdAt', 'updatedAt'])], `json-schema/${column.replace(/_/g, '-')}.schema.json`,
    ]));
    // On PostgreSQL, the names that are not one another's: one table each, with its column.
    const distinct = ['API key', 'URL thing', 'HTTPRequest', 'OAuthToken', 'SSOConfig', 'IPAddress', 'S3Bucket', 'ETag', 'userIDs'];
    const together = await runKitForTest(kitDir, { discoveryAnswers: { entities: distinct.map((name) => ({ name, fields: [{ name, type: 'text' }] })) } });
    expect([together.status, together.message]).toEqual(['completed', null]);
    await applyIn('acronym_words', together.output('ddl').content);
    const expected = distinct.map((name) => ACRONYMS.find(([n]) => n === name)!);
    expect(await columnsOf('acronym_words')).toEqual(expect.arrayContaining(expected.map(([, , table, column]) => `${table}.${column}:text:YES`)));
    const { rows } = await client.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = 'acronym_words' ORDER BY table_name`);
    expect(rows.map((r) => r.table_name)).toEqual(expected.map(([, , table]) => table).sort());
  });

  it('fails CHECK for two spellings of one name with an acronym (API key and APIKey both become api_keys), as openapi-api does', async () => {
    // Before: `API key` was table `api_keys` and `APIKey` table `apikeys`, two tables for what
    // openapi-api refused as one path.
    const run = await runKitForTest(kitDir, { discoveryAnswers: { entities: ['API key', 'APIKey', { name: 'Link', fields: [{ name: 'URL thing', type: 'text' }, { name: 'URLThing', type: 'text' }] }] } });
    expect([run.status, run.message]).toEqual(['failed', 'CHECK: CHECK failed: ' + [
      'entity "APIKey" and entity "API key" both become table "api_keys"',
      'field Link.URLThing and field Link.URL thing both become column "url_thing"',
      'field Link.URLThing and field Link.URL thing both become property "urlThing"',
    ].join('; ')]);
  });

  it('gives an optional field a schema that admits null, so a row with NULL optional columns, read back as JSON, passes its entity\'s JSON Schema', async () => {
    // Before: the optional columns were nullable but their properties took one type only, so the
    // row `{"commissionedOn": null, …}` failed the entity's own schema (must be string).
    const fields = [
      { name: 'title', type: 'string', required: true, maxLength: 80 }, { name: 'subtitle', type: 'string', maxLength: 80 },
      { name: 'kind', type: 'enum', values: ['a', 'b'] }, { name: 'phase', type: 'enum', values: ['x'], required: true },
      { name: 'ownerId', type: 'reference', entity: 'Owner' }, { name: 'count', type: 'integer' }, { name: 'share', type: 'number' },
      { name: 'due', type: 'date' }, { name: 'startsAt', type: 'datetime' }, { name: 'contact', type: 'email' }, { name: 'done', type: 'boolean' },
      { name: 'notes', type: 'text' }, { name: 'token', type: 'uuid' },
    ];
    const run = await runKitForTest(kitDir, { projectId: 'nulls', discoveryAnswers: { entities: [{ name: 'Task', fields }, 'Owner', ...example.discoveryAnswers.entities] } });
    expect([run.status, run.message]).toEqual(['completed', null]);
    const task = run.parsed('entity-schema.0') as { properties: Record<string, { type: unknown; enum?: unknown[] }>; required: string[] };

    await applyIn('nulls', run.output('ddl').content);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    // A row as JSON, its columns named as the schema's properties (snake_case → camelCase).
    const rowsOf = async (table: string) => (await client.query(`SELECT to_jsonb(t) AS row FROM nulls."${table}" t ORDER BY created_at`)).rows
      .map((r) => Object.fromEntries(Object.entries(r.row as Record<string, unknown>).map(([key, value]) => [key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()), value])));
    const validators = new Map<number, ReturnType<typeof ajv.compile>>();
    const check = (schemaIndex: number, row: object) => {
      if (!validators.has(schemaIndex)) validators.set(schemaIndex, ajv.compile(run.parsed(`entity-schema.${schemaIndex}`) as object));
      const validate = validators.get(schemaIndex)!;
      return validate(row) ? null : validate.errors;
    };

    const { rows: [owner] } = await client.query(`INSERT INTO nulls.owners (name) VALUES ('Ada') RETURNING id`);
    await client.query(`INSERT INTO nulls.tasks (title, phase) VALUES ('Bare', 'x')`);
    await client.query(
      `INSERT INTO nulls.tasks (title, subtitle, kind, phase, owner_id, count, share, due, starts_at, contact, done, notes, token)
       VALUES ('Full', 'Sub', 'a', 'x', $1, 7, 2.5, '2026-01-02', '2026-01-02T03:04:05Z', 'ada@example.com', true, 'n', gen_random_uuid())`,
      [owner.id],
    );
    const [bare, full] = await rowsOf('tasks');
    expect(bare).toMatchObject({ title: 'Bare', subtitle: null, kind: null, ownerId: null, count: null, share: null, due: null, startsAt: null, contact: null, done: null, notes: null, token: null });
    expect(Object.keys(bare!).sort()).toEqual(Object.keys(task.properties).sort());
    expect(check(0, bare!)).toBeNull();
    expect(check(0, full!)).toBeNull();
    // Required properties still refuse null, as their NOT NULL columns do.
    expect(check(0, { ...bare, title: null })).not.toBeNull();
    expect(check(0, { ...bare, phase: null })).not.toBeNull();

    // The example's own rows with only the required columns: rockets without commissioned_on,
    // launches without crewed or notes, bookings without slots.
    const { rows: [rocket] } = await client.query(`INSERT INTO nulls.rockets (name, payload_capacity_kg, status) VALUES ('Vega', 1500, 'in-service') RETURNING id`);
    const { rows: [launch] } = await client.query(`INSERT INTO nulls.launches (rocket_id, scheduled_at, site) VALUES ($1, now(), 'Kourou') RETURNING id`, [rocket.id]);
    await client.query(`INSERT INTO nulls.payload_bookings (launch_id, customer_email, mass_kg) VALUES ($1, 'ops@example.com', 10)`, [launch.id]);
    const [rocketRow] = await rowsOf('rockets');
    const [launchRow] = await rowsOf('launches');
    const [bookingRow] = await rowsOf('payload_bookings');
    expect([rocketRow!.commissionedOn, launchRow!.crewed, launchRow!.notes, bookingRow!.slots]).toEqual([null, null, null, null]);
    expect([check(2, rocketRow!), check(3, launchRow!), check(4, bookingRow!)]).toEqual([null, null, null]);

    // How: a type list, an enum with null among its values; the required ones keep a single type.
    expect(task.properties.kind).toEqual({ type: ['string', 'null'], enum: ['a', 'b', null] });
    expect(task.properties.phase).toEqual({ type: 'string', enum: ['x'] });
    expect(task.properties.count).toEqual({ type: ['integer', 'null'], minimum: -2147483648, maximum: 2147483647 });
    expect(task.properties.ownerId).toEqual({ type: ['string', 'null'], format: 'uuid', description: 'Id of a Owner.' });
    expect(task.properties.title).toEqual({ type: 'string', maxLength: 80 });
    expect(task.properties.id).toEqual({ type: 'string', format: 'uuid', readOnly: true });
  });
});

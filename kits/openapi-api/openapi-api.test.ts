import SwaggerParser from '@apidevtools/swagger-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { readFile } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { closeTestRuntime, runKitForTest } from '../../sdk/kit/index.ts';
import { ACRONYMS, acronymInput } from '../naming-cases.ts';

const kitDir = import.meta.dirname;
const example = JSON.parse(await readFile(`${kitDir}/examples/acme-rockets.json`, 'utf8'));
afterAll(() => closeTestRuntime());

describe('openapi-api kit', () => {
  it('produces an OpenAPI 3.1 YAML document valid against the official schema and accepted by swagger-parser', async () => {
    const result = await runKitForTest(kitDir, example);
    expect(result.status).toBe('completed');
    const output = result.output('openapi');
    expect([output.filename, output.contentType, output.status, output.validationErrors]).toEqual(['openapi.yaml', 'application/yaml', 'valid', []]);
    expect(output.content.startsWith('openapi: 3.1.0\n')).toBe(true);

    const document = result.parsed('openapi') as any;
    const api = (await SwaggerParser.validate(structuredClone(document))) as any;
    expect(api.info.title).toBe('Acme Rockets API');
    expect(Object.keys(api.paths)).toEqual(['/rockets', '/rockets/{rocketId}', '/launches', '/launches/{launchId}', '/payload-bookings', '/payload-bookings/{payloadBookingId}']);
    // The operations each entity asked for, and only those.
    const operations = Object.values(api.paths).flatMap((item: any) => ['get', 'post', 'patch', 'delete'].filter((m) => item[m]).map((m) => item[m].operationId));
    expect(operations).toEqual([
      'listRockets', 'createRocket', 'getRocket', 'updateRocket', 'deleteRocket',
      'listLaunches', 'createLaunch', 'getLaunch', 'updateLaunch',
      'listPayloadBookings', 'createPayloadBooking', 'getPayloadBooking', 'deletePayloadBooking',
    ]);
    expect(document.components.schemas.Rocket).toMatchObject({
      required: ['id', 'name', 'payloadCapacityKg', 'status'],
      properties: {
        id: { type: 'string', format: 'uuid', readOnly: true },
        status: { type: 'string', enum: ['in-service', 'maintenance', 'retired'] },
        commissionedOn: { type: ['string', 'null'], format: 'date' },
        name: { type: 'string', maxLength: 120 },
      },
    });
    expect(document.components.schemas.PayloadBookingInput.properties.customerEmail).toEqual({ type: 'string', format: 'email' });
    expect(document.components.schemas.Launch.properties.rocketId).toEqual({ type: 'string', format: 'uuid', description: 'Id of a Rocket.' });
  });

  it('swagger-parser rejects what the kit would get wrong (the check can fail)', async () => {
    const result = await runKitForTest(kitDir, example);
    const broken = result.parsed('openapi') as any;
    delete broken.paths['/rockets'].get.responses['200'].description;
    await expect(SwaggerParser.validate(broken)).rejects.toThrow(/description/);
  });

  it('works from entity names alone, with every operation', async () => {
    const result = await runKitForTest(kitDir, { businessProfile: { company: { name: 'Tiny' } }, discoveryAnswers: { entities: ['Note', 'Category'] } });
    expect(result.output('openapi').status).toBe('valid');
    const api = (await SwaggerParser.validate(result.parsed('openapi') as any)) as any;
    expect(Object.keys(api.paths)).toEqual(['/notes', '/notes/{noteId}', '/categories', '/categories/{categoryId}']);
  });

  it('quotes schema and property names, so YAML never reads them as booleans, nulls or numbers', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: ['True', { name: 'Null', fields: [{ name: 'null', type: 'string' }, { name: 'true', type: 'string', required: true }, { name: '007', type: 'string' }, { name: '1e3', type: 'integer' }] }] },
    });
    expect(result.output('openapi').status).toBe('valid');
    const document = result.parsed('openapi') as any;
    expect(Object.keys(document.components.schemas)).toEqual(['Error', 'True', 'TrueInput', 'TruePatch', 'Null', 'NullInput', 'NullPatch']);
    expect(Object.keys(document.components.schemas.Null.properties)).toEqual(['id', 'null', 'true', '007', '1e3']);
    expect(document.components.schemas.Null.required).toEqual(['id', 'true']);
    await SwaggerParser.validate(document);
  });

  it('takes names that JavaScript objects carry themselves (constructor, toString, valueOf) as the ordinary names they are', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Formula One' } },
      discoveryAnswers: {
        entities: [
          { name: 'Constructor', fields: [{ name: 'name', type: 'string' }, { name: 'toString', type: 'string' }, { name: 'valueOf', type: 'integer' }, { name: 'note', type: 'constructor' }] },
          { name: 'Driver', fields: [{ name: 'constructor', type: 'reference', entity: 'Constructor' }, { name: 'hasOwnProperty', type: 'boolean' }] },
        ],
      },
    });
    expect([result.status, result.message]).toEqual(['completed', null]);
    const document = result.parsed('openapi') as any;
    expect(Object.keys(document.components.schemas.Driver.properties)).toEqual(['id', 'constructor', 'hasOwnProperty']);
    // A type no table knows is a string, whatever name Object.prototype gives it.
    expect(document.components.schemas.Constructor.properties.note).toEqual({ type: ['string', 'null'] });
    await SwaggerParser.validate(document);
  });

  it('fails CHECK, listing each, for names that collide once reduced to identifiers, names without letters and unknown operations', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: {
        entities: [
          'Error', 'Payload Booking', 'PayloadBooking', 'Rocket', 'RocketInput', '用户', null,
          { name: 'Launch', operations: ['read', 'list'], fields: [{ name: 'first name', type: 'string' }, { name: 'firstName', type: 'string' }, { name: 'kind', type: 'enum', values: [] }, { name: '!!' }] },
        ],
      },
    });
    expect(result.status).toBe('failed');
    expect(result.outputs).toEqual([]);
    expect(result.message).toBe('CHECK: CHECK failed: ' + [
      'entity "Error" and the error model both become schema "Error"',
      'entity "PayloadBooking" and entity "Payload Booking" both become schema "PayloadBooking"',
      'entity "PayloadBooking" and entity "Payload Booking" both become schema "PayloadBookingInput"',
      'entity "PayloadBooking" and entity "Payload Booking" both become schema "PayloadBookingPatch"',
      'entity "PayloadBooking" and entity "Payload Booking" both become path "/payload-bookings"',
      'entity "RocketInput" and entity "Rocket" both become schema "RocketInput"',
      'discoveryAnswers.entities[5] has no name with Latin letters or digits',
      'discoveryAnswers.entities[6] has no name with Latin letters or digits',
      'entity "Launch" has unknown operations ["read"]; known: list, get, create, update, delete',
      'field Launch.firstName and field Launch.first name both become property "firstName"',
      'field Launch.kind is an enum without values',
      'entity "Launch": fields[3] has no name with Latin letters or digits',
    ].join('; '));
  });

  it('names fields called ID or URL id and url, and takes ID as the read-only key, not a second id', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: [{ name: 'Link', fields: [{ name: 'ID', type: 'uuid' }, { name: 'URL', type: 'string', required: true }, { name: 'homePageURL', type: 'string' }] }] },
    });
    expect([result.status, result.message]).toEqual(['completed', null]);
    const document = result.parsed('openapi') as any;
    expect(document.components.schemas.Link.properties).toEqual({
      id: { type: 'string', format: 'uuid', readOnly: true }, url: { type: 'string' }, homePageURL: { type: ['string', 'null'] },
    });
    expect(document.components.schemas.Link.required).toEqual(['id', 'url']);
    expect(Object.keys(document.components.schemas.LinkInput.properties)).toEqual(['url', 'homePageURL']);
    await SwaggerParser.validate(document);
  });

  it('keeps accented Latin letters as their base letters in schema, path and property names', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: [{ name: 'Ünïcode Thing', fields: [{ name: 'Größe', type: 'integer' }, { name: 'café Crème', type: 'string' }] }] },
    });
    expect([result.status, result.message]).toEqual(['completed', null]);
    const document = result.parsed('openapi') as any;
    expect(Object.keys(document.paths)).toEqual(['/unicode-things', '/unicode-things/{unicodeThingId}']);
    expect(Object.keys(document.components.schemas.UnicodeThing.properties)).toEqual(['id', 'grosse', 'cafeCreme']);
  });

  it('spells Latin letters that have no accent to drop (Æ, Ø, Ł, Œ, Þ) as their usual letters, instead of leaving them out', async () => {
    // Before: `Ærø` was schema `R` at `/rs`, `Łódź` `Odz`, `Ørsted` `Rsted`.
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Nordisk' } },
      discoveryAnswers: { entities: [{ name: 'Ærø', fields: [{ name: 'Øre', type: 'integer' }, { name: 'ŒUVRE', type: 'string' }] }, 'Łódź', 'Ørsted Þing'] },
    });
    expect([result.status, result.message]).toEqual(['completed', null]);
    const document = result.parsed('openapi') as any;
    expect(Object.keys(document.paths)).toEqual(['/aeros', '/aeros/{aeroId}', '/lodzes', '/lodzes/{lodzId}', '/orsted-things', '/orsted-things/{orstedThingId}']);
    expect(Object.keys(document.components.schemas)).toEqual(['Error', 'Aero', 'AeroInput', 'AeroPatch', 'Lodz', 'LodzInput', 'LodzPatch', 'OrstedThing', 'OrstedThingInput', 'OrstedThingPatch']);
    expect(Object.keys(document.components.schemas.Aero.properties)).toEqual(['id', 'ore', 'oeuvre']);
    await SwaggerParser.validate(document);
  });

  it('describes the key as the uuid the paths take: a field named id may leave its type out, and CHECK refuses another type', async () => {
    // Before: `id` of type integer printed `id: {type: integer}` beside a uuid path parameter and
    // postgres-schema's `"id" uuid` column; without a type, a plain string.
    const refused = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: [{ name: 'Rocket', fields: [{ name: 'id', type: 'integer' }, { name: 'name', type: 'string' }] }, { name: 'Launch', fields: [{ name: 'ID', type: 'string' }] }] },
    });
    expect([refused.status, refused.outputs]).toEqual(['failed', []]);
    expect(refused.message).toBe('CHECK: CHECK failed: field Rocket.id has type "integer", but the primary key id is always a uuid; field Launch.ID has type "string", but the primary key id is always a uuid');

    const untyped = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: [{ name: 'Rocket', fields: [{ name: 'id', description: 'The key.' }, { name: 'name', type: 'string' }] }] },
    });
    expect([untyped.status, untyped.message]).toEqual(['completed', null]);
    const document = untyped.parsed('openapi') as any;
    expect(document.components.schemas.Rocket.properties.id).toEqual({ readOnly: true, type: 'string', format: 'uuid', description: 'The key.' });
    expect(document.paths['/rockets/{rocketId}'].parameters[0].schema).toEqual({ type: 'string', format: 'uuid' });
  });

  it('gives an entity whose only field is its key input and patch schemas with empty properties, not null ones', async () => {
    // Before: `properties:` with nothing under it, which YAML reads as null: `TagInput` and
    // `TagPatch` were invalid JSON Schemas (properties must be an object), yet passed the output
    // schema (it does not look inside schemas) and swagger-parser.
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: [{ name: 'Tag', fields: [{ name: 'id', type: 'uuid' }] }, 'Note'] },
    });
    expect([result.status, result.output('openapi').status]).toEqual(['completed', 'valid']);
    const document = result.parsed('openapi') as any;
    expect(document.components.schemas.TagInput).toEqual({ type: 'object', required: [], properties: {} });
    expect(document.components.schemas.TagPatch).toEqual({ type: 'object', minProperties: 1, properties: {} });
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      expect([name, ajv.validateSchema(schema as object), ajv.errors ?? null]).toEqual([name, true, null]);
    }
    await SwaggerParser.validate(document);
  });

  it('writes entity and field names longer than the 1024 characters of a plain YAML key as explicit keys, so the document still parses', async () => {
    const entity = `Record ${'very '.repeat(220)}long`;
    const field = `note ${'quite '.repeat(200)}long`;
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: ['Note', { name: entity, fields: [{ name: field, type: 'string', required: true }, { name: 'title', type: 'string' }] }] },
    });
    expect([result.status, result.message]).toEqual(['completed', null]);
    expect([result.output('openapi').status, result.output('openapi').validationErrors]).toEqual(['valid', []]);
    const document = result.parsed('openapi') as any;
    const name = `Record${'Very'.repeat(220)}Long`;
    const property = `note${'Quite'.repeat(200)}Long`;
    expect(Object.keys(document.components.schemas)).toEqual(['Error', 'Note', 'NoteInput', 'NotePatch', name, `${name}Input`, `${name}Patch`]);
    expect(Object.keys(document.components.schemas[name].properties)).toEqual(['id', property, 'title']);
    expect(document.components.schemas[`${name}Input`].required).toEqual([property]);
    expect(Object.keys(document.paths)).toEqual(['/notes', '/notes/{noteId}', `/record${'-very'.repeat(220)}-longs`, `/record${'-very'.repeat(220)}-longs/{${`record${'Very'.repeat(220)}Long`}Id}`]);
    await SwaggerParser.validate(document);
  });

  it('fails CHECK for a maxLength that is not a whole number from 1 to 10485760, and for a required that is not true or false', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: {
        entities: [{
          name: 'Code',
          fields: [
            { name: 'code', type: 'string', maxLength: -5 }, { name: 'label', type: 'string', maxLength: 2.5 }, { name: 'note', type: 'string', maxLength: 0 },
            { name: 'title', type: 'string', maxLength: 80, required: true }, { name: 'active', type: 'boolean', required: 'yes' }, { name: 'ID', type: 'uuid' }, { name: 'id', type: 'uuid' },
          ],
        }],
      },
    });
    expect(result.status).toBe('failed');
    expect(result.message).toBe('CHECK: CHECK failed: ' + [
      'field Code.code has maxLength -5; it must be a whole number from 1 to 10485760',
      'field Code.label has maxLength 2.5; it must be a whole number from 1 to 10485760',
      'field Code.note has maxLength 0; it must be a whole number from 1 to 10485760',
      'field Code.active has required "yes"; it must be true or false',
      'field Code.id and field Code.ID both become property "id"',
    ].join('; '));
  });

  it('fails CHECK, naming the input path, for descriptions, types and enum values that are not text and for references to no listed entity', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 42 }, description: { text: 'Rockets' } },
      discoveryAnswers: {
        entities: [
          { name: 'Rocket', description: ['Reusable', 'boosters'] },
          {
            name: 'Launch',
            description: 7,
            fields: [
              { name: 'status', type: 'enum', values: ['planned', 3, null, { label: 'done' }] },
              { name: 'note', type: ['string'], description: { en: 'A note' } },
              { name: 'rocketId', type: 'reference', entity: 'rocket' },
              { name: 'padId', type: 'reference', entity: 'Pad' },
              { name: 'crewId', type: 'reference' },
              { name: 'vehicleId', type: 'reference', entity: { name: 'Rocket' } },
            ],
          },
        ],
      },
    });
    expect([result.status, result.outputs]).toEqual(['failed', []]);
    expect(result.message).toBe('CHECK: CHECK failed: ' + [
      'businessProfile.company.name must be text, not a number',
      'businessProfile.description must be text, not an object',
      'discoveryAnswers.entities[0].description must be text, not a list',
      'discoveryAnswers.entities[1].description must be text, not a number',
      'discoveryAnswers.entities[1].fields[0].values[1] must be text, not a number',
      'discoveryAnswers.entities[1].fields[0].values[2] must be text, not null',
      'discoveryAnswers.entities[1].fields[0].values[3] must be text, not an object',
      'discoveryAnswers.entities[1].fields[1].type must be text, not a list',
      'discoveryAnswers.entities[1].fields[1].description must be text, not an object',
      'field Launch.padId references unknown entity "Pad"',
      'discoveryAnswers.entities[1].fields[4].entity is missing: a reference names the entity it points to',
      'discoveryAnswers.entities[1].fields[5].entity must be text, not an object',
    ].join('; '));
  });

  it('describes entities and the API with the text given, and references an entity in any letter case', async () => {
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' }, description: 'Small API.' },
      discoveryAnswers: { entities: [{ name: 'Note', description: 'A note.', fields: [{ name: 'authorId', type: 'reference', entity: 'author' }] }, 'Author'] },
    });
    expect([result.status, result.message]).toEqual(['completed', null]);
    const document = result.parsed('openapi') as any;
    expect([document.info.description, document.tags]).toEqual(['Small API.', [{ name: 'Notes', description: 'A note.' }, { name: 'Authors', description: 'Author records.' }]]);
    expect(document.components.schemas.Note.properties.authorId).toEqual({ type: ['string', 'null'], format: 'uuid', description: 'Id of a Author.' });
  });

  it('names paths, tags and operation ids with the English plural of the last word, not a suffix rule (people, not persons)', async () => {
    // Before: /persons, /child-cares, /care-childs, /analysises, /quizes, /heros, /leafs, /newses,
    // /user-settingses and /sales-persons, with tags and operation ids to match (listPersons, listNewses).
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: { entities: ['Person', 'Child Care', 'CareChild', 'Analysis', 'Quiz', 'Hero', 'Leaf', 'News', 'User Settings', 'Sales Person', 'Status'] },
    });
    expect([result.status, result.message, result.output('openapi').status]).toEqual(['completed', null, 'valid']);
    const document = (await SwaggerParser.validate(result.parsed('openapi') as any)) as any;
    const collections = ['/people', '/child-cares', '/care-children', '/analyses', '/quizzes', '/heroes', '/leaves', '/news', '/user-settings', '/sales-people', '/statuses'];
    expect(Object.keys(document.paths).filter((p) => !p.includes('{'))).toEqual(collections);
    expect(document.paths['/people/{personId}'].get.operationId).toBe('getPerson');
    expect(document.paths['/news/{newsId}'].get.operationId).toBe('getNews');
    const plurals = ['People', 'ChildCares', 'CareChildren', 'Analyses', 'Quizzes', 'Heroes', 'Leaves', 'News', 'UserSettings', 'SalesPeople', 'Statuses'];
    expect(document.tags.map((tag: { name: string }) => tag.name)).toEqual(plurals);
    expect(collections.map((p) => document.paths[p].get.operationId)).toEqual(plurals.map((p) => `list${p}`));
    expect(collections.map((p) => document.paths[p].get.summary)).toEqual(plurals.map((p) => `List ${p}`));
  });


  it('splits a run of capitals before its last one when a lower-case letter follows, in paths, path parameters and properties (APIKey → /api-keys/{apiKeyId}, apiKey)', async () => {
    const outcomes = [];
    for (const [name] of ACRONYMS) {
      const run = await runKitForTest(kitDir, acronymInput(name), { dryRun: true });
      expect([name, run.status, run.message]).toEqual([name, 'completed', null]);
      const document = run.parsed('openapi') as any;
      const schema = Object.keys(document.components.schemas)[1]!;
      const properties = Object.keys(document.components.schemas[schema].properties);
      outcomes.push([name, Object.keys(document.paths), properties.length === 1 ? properties[0] : properties[1]]);
    }
    expect(outcomes).toEqual(ACRONYMS.map(([name, path, , , property]) => [name, [path, `${path}/{${property}Id}`], property]));
  });

  it('makes the plural of the last word after an acronym, in paths, tags and operation ids (APIHero → /api-heroes, APIHeroes), and keeps an acronym\'s plural whole (URLs)', async () => {
    // Before: the acronym and the word after it were one word: /apiheros, APIHeros; /httppeople.
    const result = await runKitForTest(kitDir, { businessProfile: { company: { name: 'Tiny' } }, discoveryAnswers: { entities: ['APIKey', 'APIHero', 'HTTPPerson', 'IPMan', 'URLs', 'PDFs'] } });
    expect([result.status, result.message, result.output('openapi').status]).toEqual(['completed', null, 'valid']);
    const document = (await SwaggerParser.validate(result.parsed('openapi') as any)) as any;
    const collections = ['/api-keys', '/api-heroes', '/http-people', '/ip-men', '/urls', '/pdfs'];
    expect(Object.keys(document.paths)).toEqual(collections.flatMap((p, i) => [p, `${p}/{${['apiKey', 'apiHero', 'httpPerson', 'ipMan', 'urls', 'pdfs'][i]}Id}`]));
    const plurals = ['APIKeys', 'APIHeroes', 'HTTPPeople', 'IPMen', 'URLs', 'PDFs'];
    expect(document.tags.map((tag: { name: string }) => tag.name)).toEqual(plurals);
    expect(collections.map((p) => document.paths[p].get.operationId)).toEqual(plurals.map((p) => `list${p}`));
    expect(document.paths['/api-keys/{apiKeyId}'].get.operationId).toBe('getAPIKey');
    expect(Object.keys(document.components.schemas).filter((n) => !/Input$|Patch$/.test(n))).toEqual(['Error', 'APIKey', 'APIHero', 'HTTPPerson', 'IPMan', 'URLs', 'PDFs']);
  });

  it('fails CHECK for two spellings of one name with an acronym (API key, APIKey), which become one path', async () => {
    // Before: the path was right to be one, but named `/apikeys`.
    const result = await runKitForTest(kitDir, { businessProfile: { company: { name: 'Tiny' } }, discoveryAnswers: { entities: ['API key', 'APIKey', 'Rocket', 'Rocket 2', 'API 2'] } });
    expect([result.status, result.outputs]).toEqual(['failed', []]);
    expect(result.message).toBe('CHECK: CHECK failed: ' + [
      'entity "APIKey" and entity "API key" both become schema "APIKey"',
      'entity "APIKey" and entity "API key" both become schema "APIKeyInput"',
      'entity "APIKey" and entity "API key" both become schema "APIKeyPatch"',
      'entity "APIKey" and entity "API key" both become path "/api-keys"',
    ].join('; '));
    // The path is the name's own words: `Rocket 2` and `API 2` keep the bound the schema name loses.
    const apart = await runKitForTest(kitDir, { businessProfile: { company: { name: 'Tiny' } }, discoveryAnswers: { entities: ['Rocket 2', 'API 2'] } });
    expect([apart.status, apart.message]).toEqual(['completed', null]);
    expect(Object.keys((apart.parsed('openapi') as any).paths)).toEqual(['/rocket-2s', '/rocket-2s/{rocket2Id}', '/api-2s', '/api-2s/{api2Id}']);
  });

  it('lets an optional field be null, so a client can clear it, while a required field stays non-null', async () => {
    // Before: every property had a single type, so `{"subtitle": null}` was refused: once set, an
    // optional field could not be cleared (leaving it out of a PATCH leaves it as it is), and the
    // NULL the database column holds for it did not match the document.
    const result = await runKitForTest(kitDir, {
      businessProfile: { company: { name: 'Tiny' } },
      discoveryAnswers: {
        entities: [{
          name: 'Task',
          fields: [
            { name: 'id', type: 'uuid' }, { name: 'title', type: 'string', required: true, maxLength: 80 }, { name: 'subtitle', type: 'string', maxLength: 80 },
            { name: 'kind', type: 'enum', values: ['a', 'b'] }, { name: 'phase', type: 'enum', values: ['x'], required: true },
            { name: 'ownerId', type: 'reference', entity: 'Owner' }, { name: 'count', type: 'integer' }, { name: 'due', type: 'date', description: 'When.' },
            { name: 'contact', type: 'email' }, { name: 'done', type: 'boolean' }, { name: 'score', type: 'number', required: true },
          ],
        }, 'Owner'],
      },
    });
    expect([result.status, result.message, result.output('openapi').status]).toEqual(['completed', null, 'valid']);
    const document = result.parsed('openapi') as any;
    await SwaggerParser.validate(structuredClone(document));
    const { Task, TaskInput, TaskPatch } = document.components.schemas;
    expect(Task.properties).toEqual({
      id: { readOnly: true, type: 'string', format: 'uuid' },
      title: { type: 'string', maxLength: 80 },
      subtitle: { type: ['string', 'null'], maxLength: 80 },
      kind: { type: ['string', 'null'], enum: ['a', 'b', null] },
      phase: { type: 'string', enum: ['x'] },
      ownerId: { type: ['string', 'null'], format: 'uuid', description: 'Id of a Owner.' },
      // postgres-schema's 4-byte integer column: the API takes no value the row cannot hold.
      count: { type: ['integer', 'null'], minimum: -2147483648, maximum: 2147483647 },
      due: { type: ['string', 'null'], format: 'date', description: 'When.' },
      contact: { type: ['string', 'null'], format: 'email' },
      done: { type: ['boolean', 'null'] },
      score: { type: 'number' },
    });
    expect(TaskInput.properties).toEqual(Object.fromEntries(Object.entries(Task.properties).filter(([name]) => name !== 'id')));
    expect(TaskPatch.properties).toEqual(TaskInput.properties);

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const valid = (schema: object, value: object) => ajv.validate(schema, value);
    const cleared = { subtitle: null, kind: null, ownerId: null, count: null, due: null, contact: null, done: null };
    const required = { title: 'Launch', phase: 'x', score: 1 };
    expect(valid(Task, { id: '5f0c6a52-3b8e-4b1a-9d3c-2f0a1b2c3d4e', ...required, ...cleared })).toBe(true);
    expect(valid(TaskInput, { ...required, ...cleared })).toBe(true);
    for (const [name, value] of Object.entries(cleared)) expect([name, valid(TaskPatch, { [name]: value })]).toEqual([name, true]);
    // A required field cannot be cleared, and null is no way around a field's own rules.
    for (const name of Object.keys(required)) {
      expect([name, valid(TaskPatch, { [name]: null }), valid(TaskInput, { ...required, [name]: null })]).toEqual([name, false, false]);
    }
    expect([valid(TaskPatch, { kind: 'c' }), valid(TaskPatch, { subtitle: 'x'.repeat(81) }), valid(TaskPatch, { due: 'soon' }), valid(TaskPatch, { count: 1.5 })]).toEqual([false, false, false, false]);
    expect(valid(Task, { id: null, ...required })).toBe(false);
  });

  it('fails CHECK listing every missing input', async () => {
    const result = await runKitForTest(kitDir, { projectId: 'p', discoveryAnswers: {} });
    expect(result.status).toBe('failed');
    expect(result.message).toBe('CHECK: missing required inputs: businessProfile.company.name, discoveryAnswers.entities');
    expect(result.outputs).toEqual([]);
  });
});

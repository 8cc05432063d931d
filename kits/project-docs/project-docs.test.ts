import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeTestRuntime, runKitForTest, type KitTestResult } from '../../sdk/kit/index.ts';

const kitDir = import.meta.dirname;
const example = JSON.parse(await readFile(`${kitDir}/examples/acme-rockets.json`, 'utf8'));
let result: KitTestResult;
beforeAll(async () => {
  result = await runKitForTest(kitDir, example);
});
afterAll(() => closeTestRuntime());

function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```mermaid\n([\s\S]*?)\n```/g)].map((m) => m[1] as string);
}

describe('project-docs kit', () => {
  it('renders a README, an architecture overview, an ADR index and one ADR per decision, all valid', () => {
    expect(result.status).toBe('completed');
    expect(result.outputs.map((o) => [o.filename, o.status])).toEqual([
      ['README.md', 'valid'],
      ['docs/architecture.md', 'valid'],
      ['docs/adr/README.md', 'valid'],
      ['docs/adr/0001-record-architecture-decisions.md', 'valid'],
      ['docs/adr/0002-use-postgresql-as-the-system-of-record.md', 'valid'],
      ['docs/adr/0003-expose-a-rest-api-described-by-openapi-3-1.md', 'valid'],
    ]);
    const readme = result.output('readme').content;
    expect(readme).toContain('# Acme Rockets\n\nAcme Rockets books payload slots');
    expect(readme).toContain('- Let customers book a payload slot online\n');
    expect(readme).toContain('| PayloadBooking | A customer\'s reserved mass on a launch. |');
    expect(readme).toContain('[Architecture overview](docs/architecture.md)');
  });

  it('draws the system context and the data model as Mermaid diagrams from the discovery answers', () => {
    const [context, model] = mermaidBlocks(result.output('architecture').content);
    expect(context!.split('\n')).toEqual([
      'flowchart LR',
      '  actor1(["research teams"])',
      '  actor2(["mission controllers"])',
      '  app["Acme Rockets application"]',
      '  db[("PostgreSQL")]',
      '  ext1["Stripe"]',
      '  ext2["Weather API"]',
      '  actor1 --> app',
      '  actor2 --> app',
      '  app --> db',
      '  app -- "payments for bookings" --> ext1',
      '  app -- "launch-window forecasts" --> ext2',
    ]);
    expect(model!.split('\n').slice(0, 3)).toEqual(['erDiagram', '  "Rocket" ||--o{ "Launch" : "rocketId"', '  "Launch" ||--o{ "PayloadBooking" : "launchId"']);
    expect(model).toContain('  "Rocket" {\n    uuid id PK\n    string name\n    decimal payloadCapacityKg\n');
    expect(model).toContain('    uuid rocketId FK\n');
  });

  it('writes decision records from the discovery answers, numbered after ADR 0001', () => {
    expect(result.output('adr.1').content).toBe(
      '# 0002. Use PostgreSQL as the system of record\n\nStatus: Accepted\n\n## Context\n\nBookings and launches need transactions and referential integrity.\n\n' +
        '## Decision\n\nStore all operational data in one PostgreSQL database.\n\n## Consequences\n\nOne backup and migration story; reporting reads from replicas.\n',
    );
    expect(result.output('adr-index').content).toContain('| 0003 | [Expose a REST API described by OpenAPI 3.1](0003-expose-a-rest-api-described-by-openapi-3-1.md) | Accepted |');
  });

  it('keeps Mermaid labels intact when answers contain quotes', async () => {
    const quoted = structuredClone(example);
    quoted.discoveryAnswers.architecture.integrations = [{ name: 'Bank "Prime"', purpose: 'pay\nouts' }];
    const run = await runKitForTest(kitDir, quoted);
    expect(run.output('architecture').status).toBe('valid');
    expect(mermaidBlocks(run.output('architecture').content)[0]).toContain('  ext1["Bank #quot;Prime#quot;"]\n');
    expect(mermaidBlocks(run.output('architecture').content)[0]).toContain('  app -- "pay outs" --> ext1');
  });

  it('fails CHECK for a reference to an entity that is not listed, instead of drawing it', async () => {
    const dangling = structuredClone(example);
    dangling.discoveryAnswers.entities[1].fields[1].entity = 'Ghost';
    dangling.discoveryAnswers.entities[2].fields.push({ name: 'padId', type: 'reference' });
    const run = await runKitForTest(kitDir, dangling);
    expect([run.status, run.outputs]).toEqual(['failed', []]);
    expect(run.message).toBe('CHECK: CHECK failed: field Launch.rocketId references unknown entity "Ghost"; discoveryAnswers.entities[2].fields[5].entity is missing: a reference names the entity it points to');
    // A reference to an entity listed later, in another spelling of the name the diagram draws, is one.
    const forward = structuredClone(example);
    forward.discoveryAnswers.entities[0].fields.push({ name: 'lastLaunchId', type: 'reference', entity: 'launch' });
    const drawn = await runKitForTest(kitDir, forward);
    expect([drawn.status, drawn.message]).toEqual(['completed', null]);
    expect(mermaidBlocks(drawn.output('architecture').content)[1]).toContain('\n  "Launch" |o--o{ "Rocket" : "lastLaunchId"\n');
  });

  it('draws an optional reference as zero-or-one and a required one as exactly-one, and a key without a type as the required uuid it is', async () => {
    // Before: every reference was drawn `||--o{` (each row has exactly one), also a nullable column;
    // and a field `id` without a type was an optional `string` in the diagram and the table, where
    // the other kits make it a uuid that is always there.
    const input = structuredClone(example);
    input.discoveryAnswers.entities = [
      { name: 'User', fields: [{ name: 'id' }, { name: 'manager', type: 'reference', entity: 'User' }] },
      { name: 'Order', fields: [{ name: 'buyer', type: 'reference', entity: 'User', required: true }, { name: 'referrer', type: 'reference', entity: 'User', required: false }] },
    ];
    const run = await runKitForTest(kitDir, input);
    expect(run.output('architecture')).toMatchObject({ status: 'valid', validationErrors: [] });
    expect(mermaidBlocks(run.output('architecture').content)[1]!.split('\n')).toEqual([
      'erDiagram',
      '  "User" |o--o{ "User" : "manager"',
      '  "User" ||--o{ "Order" : "buyer"',
      '  "User" |o--o{ "Order" : "referrer"',
      '  "User" {', '    uuid id PK', '    uuid manager FK', '  }',
      '  "Order" {', '    uuid buyer FK', '    uuid referrer FK', '  }',
    ]);
    expect(run.output('architecture').content).toContain('\n| `id` | uuid | yes |  |\n');
  });

  it('lists an enum\'s values in its field\'s notes also when the field has a description', async () => {
    // Before: a description replaced the values, so a documented enum did not say what it takes.
    const input = structuredClone(example);
    input.discoveryAnswers.entities[0].fields[3].description = 'Where the rocket is | now.';
    const run = await runKitForTest(kitDir, input);
    expect(run.output('architecture').content).toContain('\n| `status` | enum | yes | Where the rocket is \\| now.; one of in-service, maintenance, retired |\n');
    expect(result.output('architecture').content).toContain('\n| `status` | enum | yes | one of in-service, maintenance, retired |\n');
  });

  it('finds a referenced entity in any letter case, as openapi-api and postgres-schema do, and draws it by its own name', async () => {
    // Before: `payloadbooking` was looked up as diagram name `Payloadbooking`, so CHECK refused a
    // reference the other two kits take, and composite-bundle failed on this component alone.
    const input = structuredClone(example);
    input.discoveryAnswers.entities[0].fields.push({ name: 'lastBookingId', type: 'reference', entity: 'payloadbooking' });
    input.discoveryAnswers.entities[1].fields[1].entity = 'ROCKET';
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    expect(run.output('architecture')).toMatchObject({ status: 'valid', validationErrors: [] });
    expect(mermaidBlocks(run.output('architecture').content)[1]!.split('\n').slice(0, 4)).toEqual([
      'erDiagram',
      '  "PayloadBooking" |o--o{ "Rocket" : "lastBookingId"',
      '  "Rocket" ||--o{ "Launch" : "rocketId"',
      '  "Launch" ||--o{ "PayloadBooking" : "launchId"',
    ]);
    expect(run.output('architecture').content).toContain('\n| `lastBookingId` | reference to PayloadBooking | no |  |\n');
  });

  it('keeps Markdown table rows intact when answers contain "|" or line breaks', async () => {
    const piped = structuredClone(example);
    piped.discoveryAnswers.entities[0].description = 'Rockets | boosters\nand stages';
    piped.discoveryAnswers.entities[0].fields[0].description = 'a | b\nc';
    piped.discoveryAnswers.decisions[0].title = 'Use A | B\nnot C';
    const run = await runKitForTest(kitDir, piped);
    expect(run.output('readme').content).toContain('| Rocket | Rockets \\| boosters and stages |\n');
    expect(run.output('architecture').content).toContain(' | a \\| b c |\n');
    expect(run.output('adr-index').content).toContain('| 0002 | [Use A \\| B not C](0002-use-a-b-not-c.md) | Accepted |\n');
  });

  it('quotes entity names in the ER diagram and starts attribute names with a letter or _, so Mermaid keywords and digits parse', async () => {
    const input = structuredClone(example);
    input.discoveryAnswers.entities = [
      { name: 'User', fields: [{ name: 'ID', type: 'uuid' }, { name: 'model', type: 'reference', entity: '3D Model' }, { name: '2fa Code', type: 'string' }, { name: 'PK', type: 'string' }, { name: 'Größe', type: 'integer' }] },
      '3D Model', 'Class', { name: 'Style', fields: [{ name: 'end', type: 'reference', entity: 'End', required: true }] }, 'End',
    ];
    const run = await runKitForTest(kitDir, input);
    expect(run.output('architecture')).toMatchObject({ status: 'valid', validationErrors: [] });
    expect(mermaidBlocks(run.output('architecture').content)[1]!.split('\n')).toEqual([
      'erDiagram',
      '  "3DModel" |o--o{ "User" : "model"',
      '  "End" ||--o{ "Style" : "end"',
      '  "User" {',
      '    uuid ID PK',
      '    uuid model FK',
      '    string _2fa_Code',
      '    string _PK',
      '    int Grosse',
      '  }',
      '  "3DModel" {',
      '  }',
      '  "Class" {',
      '  }',
      '  "Style" {',
      '    uuid end FK',
      '  }',
      '  "End" {',
      '  }',
    ]);
  });

  it('escapes a decision\'s status for its table cell and keeps a multi-line title to one heading', async () => {
    const input = structuredClone(example);
    input.discoveryAnswers.decisions = [{ title: 'Use X', status: 'Accepted | superseded by 0004' }, { title: 'Line one\n# Injected heading', status: 'Proposed\nmaybe' }];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    const index = run.output('adr-index').content;
    expect(index).toContain('| 0002 | [Use X](0002-use-x.md) | Accepted \\| superseded by 0004 |\n');
    expect(index).toContain('| 0003 | [Line one # Injected heading](0003-line-one-injected-heading.md) | Proposed maybe |\n');
    const adr = run.output('adr.2').content;
    expect(adr.startsWith('# 0003. Line one # Injected heading\n\nStatus: Proposed maybe\n')).toBe(true);
    expect(adr.split('\n').filter((line) => line.startsWith('# '))).toHaveLength(1);
  });

  it('keeps a company name, industry, architecture and goals with line breaks to their one heading or list item', async () => {
    const input = structuredClone(example);
    input.businessProfile.company = { name: 'Acme\n# Injected\n```', industry: 'space\n\n## Oops' };
    input.businessProfile.goals = ['Fly\n\n# Far', 'Land'];
    input.discoveryAnswers.architecture.style = 'monolith\n- extra item';
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    const readme = run.output('readme').content.split('\n');
    expect(readme.filter((line) => /^#+ /.test(line))).toEqual(['# Acme # Injected ```', '## Goals', '## Domain', '## Documentation']);
    expect(readme.filter((line) => line.startsWith('- '))).toEqual([
      '- Industry: space ## Oops',
      '- Architecture: monolith - extra item on Node.js, data in PostgreSQL',
      '- Deployment: containers on a managed Kubernetes cluster',
      '- Fly # Far',
      '- Land',
      '- [Architecture overview](docs/architecture.md) — context and data-model diagrams',
      '- [Architecture decision records](docs/adr/README.md)',
    ]);
    expect(readme.some((line) => line.startsWith('```'))).toBe(false);
    const architecture = run.output('architecture').content.split('\n');
    expect(architecture[0]).toBe('# Architecture overview — Acme # Injected ```');
    expect(architecture.filter((line) => line.startsWith('```'))).toEqual(['```mermaid', '```', '```mermaid', '```']);
    expect(run.output('adr.0').content).toContain('\nDecisions about Acme # Injected ``` need to be understood');
  });

  it('keeps a field name with backticks inside its code span in the field table', async () => {
    const input = structuredClone(example);
    input.discoveryAnswers.entities = [{ name: 'Snippet', fields: [{ name: 'a`b|c', type: 'string' }, { name: '`quoted``', type: 'text' }] }];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    const rows = run.output('architecture').content.split('\n').filter((line) => line.startsWith('| ') && line.includes('| no |'));
    expect(rows).toEqual(['| ``a`b\\|c`` | string | no |  |', '| ``` `quoted`` ``` | text | no |  |']);
  });

  it('fails CHECK for entities that would be drawn as one: names that differ only in letter case or have no Latin letters', async () => {
    const input = structuredClone(example);
    input.discoveryAnswers.entities = ['user', 'User', 'Order', '日本', '中国'];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.outputs]).toEqual(['failed', []]);
    expect(run.message).toBe('CHECK: CHECK failed: entity "User" and entity "user" both become entity "User"; entity "中国" and entity "日本" both become entity "Entity"');
  });

  it('fails CHECK, listing each, for null entries, untitled decisions and a required that is not true or false', async () => {
    const input = structuredClone(example);
    input.discoveryAnswers.entities = ['A', null, { name: 'B', fields: [null, { name: 'x', required: 'yes' }] }, { description: 'no name' }];
    input.discoveryAnswers.architecture.integrations = [null];
    input.discoveryAnswers.decisions = [{ title: 'Use X' }, { context: 'no title' }, null, { title: ' \n ' }, { title: 'Y', status: 4 }];
    const run = await runKitForTest(kitDir, input);
    expect(run.status).toBe('failed');
    expect(run.outputs).toEqual([]);
    expect(run.message).toBe('CHECK: CHECK failed: ' + [
      'discoveryAnswers.entities[1] must be a name or an object with a name',
      'entity "B": fields[0] must be an object with a name',
      'field B.x has required "yes"; it must be true or false',
      'discoveryAnswers.entities[3] must be a name or an object with a name',
      'discoveryAnswers.architecture.integrations[0] must be a name or an object with a name',
      'discoveryAnswers.decisions[1] has no title',
      'discoveryAnswers.decisions[2] must be an object with a title',
      'discoveryAnswers.decisions[3] has no title',
      'discoveryAnswers.decisions[4]: status must be text',
    ].join('; '));
    const nulls = await runKitForTest(kitDir, { ...example, discoveryAnswers: { ...example.discoveryAnswers, decisions: [null] } });
    expect(nulls.message).toBe('CHECK: CHECK failed: discoveryAnswers.decisions[0] must be an object with a title');
  });

  it('keeps a goal or a company name that starts with ```, ~~~, # or > as text, not a code block, heading or quote', async () => {
    const input = structuredClone(example);
    input.businessProfile.company.name = '```';
    delete input.businessProfile.description;
    input.businessProfile.goals = ['```', '~~~ tildes', '# Not a heading', '> not a quote', '`npm` everywhere', '```js inline```', 'Land'];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    expect(run.outputs.map((o) => [o.outputId, o.status, o.validationWarnings])).toEqual(run.outputs.map((o) => [o.outputId, 'valid', []]));
    const readme = run.output('readme').content.split('\n');
    expect(readme.slice(0, 3)).toEqual(['# \\```', '', '\\``` (aerospace).']);
    const goals = readme.slice(readme.indexOf('## Goals') + 2, readme.indexOf('## Domain') - 1);
    expect(goals).toEqual(['- \\```', '- \\~~~ tildes', '- \\# Not a heading', '- \\> not a quote', '- `npm` everywhere', '- ```js inline```', '- Land']);
    // No line outside the Mermaid blocks opens a code block.
    expect(readme.filter((line) => /^\s*(```|~~~)/.test(line))).toEqual([]);
    const architecture = run.output('architecture').content.split('\n');
    expect(architecture[2]).toBe('\\``` is built as a modular monolith on Node.js, with');
    expect(architecture.filter((line) => /^\s*(```|~~~)/.test(line))).toEqual(['```mermaid', '```', '```mermaid', '```']);
  });

  it('keeps a goal or a company name that starts like HTML, a list, a rule or an indented code block as text', async () => {
    const input = structuredClone(example);
    // At the start of the architecture overview's paragraph, `<!--` would open an HTML block that
    // hides the rest of the document, both diagrams included.
    input.businessProfile.company.name = '<!-- Acme';
    delete input.businessProfile.description;
    input.businessProfile.goals = ['<pre>fast', '<script>x</script>', '---', '* * *', '- nested', '1. first', '2) second', '    indented', '\ttabbed', '-5% churn', '**Fast** checkout', 'a < b', 'Land'];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    expect(run.outputs.map((o) => [o.outputId, o.status, o.validationWarnings])).toEqual(run.outputs.map((o) => [o.outputId, 'valid', []]));
    const readme = run.output('readme').content.split('\n');
    expect(readme.slice(0, 3)).toEqual(['# \\<!-- Acme', '', '\\<!-- Acme (aerospace).']);
    const goals = readme.slice(readme.indexOf('## Goals') + 2, readme.indexOf('## Domain') - 1);
    expect(goals).toEqual([
      '- \\<pre>fast', '- \\<script>x</script>', '- \\---', '- \\* * *', '- \\- nested', '- 1\\. first', '- 2\\) second',
      '- indented', '- tabbed', '- -5% churn', '- **Fast** checkout', '- a < b', '- Land',
    ]);
    const architecture = run.output('architecture').content.split('\n');
    expect(architecture[2]).toBe('\\<!-- Acme is built as a modular monolith on Node.js, with');
    // No line outside a code span starts an HTML block.
    expect([...readme, ...architecture].filter((line) => /^\s*<[A-Za-z/!?]/.test(line))).toEqual([]);
  });

  it('keeps a database that starts like HTML or a list as text: the overview\'s fourth line starts with it', async () => {
    // Before: `<!-- undecided` opened an HTML block there that hid the rest of the document, both
    // diagrams included, and `1. PostgreSQL` cut the sentence into a numbered list.
    for (const [database, line] of [
      ['<!-- undecided', '\\<!-- undecided as its system of record, deployed as containers on a managed Kubernetes cluster.'],
      ['1. PostgreSQL, 2. Redis', '1\\. PostgreSQL, 2. Redis as its system of record, deployed as containers on a managed Kubernetes cluster.'],
      ['# shards', '\\# shards as its system of record, deployed as containers on a managed Kubernetes cluster.'],
    ] as Array<[string, string]>) {
      const input = structuredClone(example);
      input.discoveryAnswers.architecture.database = database;
      const run = await runKitForTest(kitDir, input);
      expect([run.status, run.message]).toEqual(['completed', null]);
      const architecture = run.output('architecture').content.split('\n');
      expect(architecture[3]).toBe(line);
      expect(mermaidBlocks(run.output('architecture').content)).toHaveLength(2);
      expect(run.output('readme').content).toContain(`data in ${line.split(' as its')[0]}\n`);
    }
  });

  it('escapes brackets and backslashes in a decision\'s title where the ADR index links it', async () => {
    // Before: `[0002 … [draft](…)` linked only `draft`, and a title ending in `\` escaped the `]`
    // that closes the link text, so the row showed no link at all.
    const input = structuredClone(example);
    input.discoveryAnswers.decisions = [{ title: 'Adopt Kafka [draft' }, { title: 'Keep files under C:\\' }, { title: 'Use [RFC 7807] | problem details' }];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    const rows = run.output('adr-index').content.split('\n').filter((line) => /^\| 000[2-4] /.test(line));
    expect(rows).toEqual([
      '| 0002 | [Adopt Kafka \\[draft](0002-adopt-kafka-draft.md) | Accepted |',
      '| 0003 | [Keep files under C:\\\\](0003-keep-files-under-c.md) | Accepted |',
      '| 0004 | [Use \\[RFC 7807\\] \\| problem details](0004-use-rfc-7807-problem-details.md) | Accepted |',
    ]);
    expect(run.output('adr.2').content.split('\n')[0]).toBe('# 0003. Keep files under C:\\');
  });

  it('spells Latin letters that have no accent to drop (Æ, Ø, Ł) as their usual letters in the diagram, headings and ADR file names', async () => {
    // Before: `Ærø` was drawn as entity `R`, `Łódź` as `Odz`, and the ADR file was `0002-r-first.md`.
    const input = structuredClone(example);
    input.discoveryAnswers.entities = [{ name: 'Ærø', fields: [{ name: 'Øre', type: 'integer' }, { name: 'city', type: 'reference', entity: 'Łódź' }] }, 'Łódź'];
    input.discoveryAnswers.decisions = [{ title: 'Ærø first' }];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    expect(mermaidBlocks(run.output('architecture').content)[1]!.split('\n')).toEqual([
      'erDiagram', '  "Lodz" |o--o{ "Aero" : "city"', '  "Aero" {', '    int Ore', '    uuid city FK', '  }', '  "Lodz" {', '  }',
    ]);
    expect(run.output('architecture').content).toContain('\n### Aero\n');
    expect(run.outputs.map((o) => o.filename)).toContain('docs/adr/0002-aero-first.md');
  });

  it('draws entities whose names hold acronyms by the schema names openapi-api gives them (API key → APIKey, HTTPRequest), and fails CHECK for two spellings of one', async () => {
    // since project-docs 1.1.0, words() is openapi-api's (1.2.0) and postgres-schema's (1.3.0) (`APIKey` is `API Key`);
    // joined in Pascal case, the words are what they were, so the diagram names no entity anew.
    const input = structuredClone(example);
    input.discoveryAnswers.entities = [
      { name: 'API key', fields: [{ name: 'ID' }, { name: 'ownerId', type: 'reference', entity: 'oauthtoken', required: true }] },
      'OAuthToken', { name: 'HTTPRequest', fields: [{ name: 'keyId', type: 'reference', entity: 'api KEY' }] }, 'userIDs', 'Ünïcode Thing',
    ];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    expect(mermaidBlocks(run.output('architecture').content)[1]!.split('\n')).toEqual([
      'erDiagram',
      '  "OAuthToken" ||--o{ "APIKey" : "ownerId"',
      '  "APIKey" |o--o{ "HTTPRequest" : "keyId"',
      '  "APIKey" {', '    uuid ID PK', '    uuid ownerId FK', '  }',
      '  "OAuthToken" {', '  }',
      '  "HTTPRequest" {', '    uuid keyId FK', '  }',
      '  "UserIDs" {', '  }',
      '  "UnicodeThing" {', '  }',
    ]);
    expect(run.output('architecture').content.split('\n').filter((line) => line.startsWith('### '))).toEqual(['### APIKey', '### OAuthToken', '### HTTPRequest', '### UserIDs', '### UnicodeThing']);
    const twice = structuredClone(example);
    twice.discoveryAnswers.entities = ['API key', 'APIKey', 'URL thing', 'URLThing'];
    const refused = await runKitForTest(kitDir, twice);
    expect([refused.status, refused.message]).toEqual(['failed', 'CHECK: CHECK failed: entity "APIKey" and entity "API key" both become entity "APIKey"; entity "URLThing" and entity "URL thing" both become entity "URLThing"']);
  });

  it('draws a field of a type no table knows, even one JavaScript objects carry (constructor), as a string', async () => {
    const input = structuredClone(example);
    input.discoveryAnswers.entities = [{ name: 'Part', fields: [{ name: 'maker', type: 'constructor' }, { name: 'label', type: 'toString' }, { name: 'size', type: 'integer' }] }];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.message]).toEqual(['completed', null]);
    expect(mermaidBlocks(run.output('architecture').content)[1]!.split('\n')).toEqual(['erDiagram', '  "Part" {', '    string maker', '    string label', '    int size', '  }']);
  });

  it('fails CHECK, naming the input path, for text that is not text and lists that are not lists', async () => {
    const input = structuredClone(example);
    input.businessProfile.company.industry = 7;
    input.businessProfile.description = { text: 'Rockets' };
    input.businessProfile.goals = 'Fly far';
    input.businessProfile.audience = ['crews', 3];
    input.discoveryAnswers.architecture = { style: ['monolith'], integrations: [{ name: 'Stripe', purpose: 4 }] };
    input.discoveryAnswers.decisions = [{ title: 'Use X', context: { why: 'because' } }];
    input.discoveryAnswers.entities = [
      { name: 'Rocket', description: 12, fields: [{ name: 'status', type: 'enum', values: 'a,b' }, { name: 'kind', type: 'enum', values: ['a', false] }, { name: 'note', type: 5, description: ['x'] }] },
    ];
    const run = await runKitForTest(kitDir, input);
    expect([run.status, run.outputs]).toEqual(['failed', []]);
    expect(run.message).toBe('CHECK: CHECK failed: ' + [
      'businessProfile.company.industry must be text, not a number',
      'businessProfile.description must be text, not an object',
      'businessProfile.goals must be a list',
      'businessProfile.audience[1] must be text, not a number',
      'discoveryAnswers.entities[0].description must be text, not a number',
      'field Rocket.status is an enum without values',
      'discoveryAnswers.entities[0].fields[1].values[1] must be text, not a boolean',
      'discoveryAnswers.entities[0].fields[2].type must be text, not a number',
      'discoveryAnswers.entities[0].fields[2].description must be text, not a list',
      'discoveryAnswers.architecture.style must be text, not a list',
      'discoveryAnswers.architecture.integrations[0].purpose must be text, not a number',
      'discoveryAnswers.decisions[0].context must be text, not an object',
    ].join('; '));
    const architecture = await runKitForTest(kitDir, { ...example, discoveryAnswers: { ...example.discoveryAnswers, architecture: 'microservices' } });
    expect(architecture.message).toBe('CHECK: CHECK failed: discoveryAnswers.architecture must be an object, not a string');
  });

  it('fails CHECK listing every missing input', async () => {
    const run = await runKitForTest(kitDir, { businessProfile: { company: { name: 'Acme' } }, discoveryAnswers: {} });
    expect(run.status).toBe('failed');
    expect(run.message).toBe('CHECK: missing required inputs: businessProfile.company.industry, discoveryAnswers.entities');
  });
});

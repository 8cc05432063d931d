/**
 * `specwright kit init`: a small, working file kit — a CHECK on required inputs and on what PLAN
 * reads of them, a PLAN hook that shapes the input for templates, a markdown and a schema-checked
 * JSON output, an example input and a README — that passes `kit validate` and `kit test` as
 * generated. Authors copy it, so its hooks refuse what they cannot take with a message, never a
 * JavaScript error.
 */
import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { kitIdSchema, RESERVED_KIT_IDS } from '../../kit-runtime/index.ts';

export class ScaffoldError extends Error {
  override name = 'ScaffoldError';
}

/** Latin letters NFD leaves whole, in their usual spelling (as the built-in kits spell them), in lower case. */
const WHOLE_LETTERS: Record<string, string> = { ø: 'o', ł: 'l', đ: 'd', ð: 'd', ħ: 'h', ı: 'i', æ: 'ae', œ: 'oe', þ: 'th', ß: 'ss' };

/** A kit id from a directory name: lowercase letters, digits and single hyphens; never an id the registry reserves. */
export function kitIdFromDirectory(dir: string): string {
  // Accented letters keep their base letter (`Größe Ding` → `grosse-ding`, `Ærø` → `aero`), as the scaffold's slug() does.
  const latin = basename(resolve(dir)).normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[øłđðħıæœþß]/g, (letter) => WHOLE_LETTERS[letter]!);
  const id = latin.replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60).replace(/-+$/, '');
  if (id === '') return 'my-kit';
  return RESERVED_KIT_IDS.includes(id) ? `${id}-kit` : id;
}

export function scaffoldFiles(kitId: string, displayName = titleOf(kitId)): Record<string, string> {
  const manifest = {
    metadata: { id: kitId, displayName, version: '0.1.0', description: `${displayName}: a project summary and a README.`, author: 'You', kitType: 'file' },
    platform: { name: 'generic', category: 'documentation' },
    phases: ['CHECK', 'PLAN', 'VALIDATE'],
    inputs: { required: ['businessProfile.company.name', 'discoveryAnswers.entities'] },
    outputs: [
      { id: 'readme', filename: 'README.md', template: 'templates/readme.md.hbs', outputType: 'markdown' },
      { id: 'summary', filename: 'summary.json', template: 'templates/summary.json.hbs', outputType: 'json', schema: 'schemas/summary.schema.json' },
    ],
    discovery: { pools: [] },
    hooks: { CHECK: 'hooks/plan.js', PLAN: 'hooks/plan.js' },
  };
  return {
    'kit.json': `${JSON.stringify(manifest, null, 2)}\n`,
    'hooks/plan.js': `// Runs in the sandbox: plain JavaScript, no imports. CHECK and PLAN both read the entities, so both
// live here and share slug(): CHECK refuses, with a message, every entity PLAN could not take.

// An entity is a name or an object with a name.
function entityName(entity) {
  return typeof entity === 'string' ? entity : entity !== null && typeof entity === 'object' ? entity.name : undefined;
}

// \`Größe Ding\` → \`grosse-ding\`, \`Ærø\` → \`aero\`: accented letters keep their base letter, and the letters
// that have none their usual spelling; other characters join words with a hyphen. A name without
// Latin letters or digits (\`日本\`) has no slug: '' (CHECK refuses it).
var WHOLE_LETTERS = ${JSON.stringify(WHOLE_LETTERS)};
function slug(name) {
  return name.normalize('NFD').replace(/[\\u0300-\\u036f]/g, '').toLowerCase()
    .replace(/[øłđðħıæœþß]/g, function (letter) { return WHOLE_LETTERS[letter]; })
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

// The default CHECK has made sure the required inputs are there (not empty); this one checks what
// PLAN reads of them. Each error is one line of the run's message.
function check(context) {
  const entities = context.input.discoveryAnswers.entities;
  if (!Array.isArray(entities)) return { errors: ['discoveryAnswers.entities must be a list of names'] };
  const errors = [];
  // Keyed by slugs the names give: with no prototype, \`constructor\` is a slug like any other.
  const slugs = Object.create(null);
  entities.forEach(function (entity, index) {
    const name = entityName(entity);
    const where = 'discoveryAnswers.entities[' + index + ']';
    if (typeof name !== 'string' || name.trim() === '') { errors.push(where + ' must be a name or an object with a name'); return; }
    const id = slug(name);
    if (id === '') errors.push(where + ' (' + JSON.stringify(name) + ') needs Latin letters or digits for its slug');
    else if (slugs[id] !== undefined) errors.push(where + ' (' + JSON.stringify(name) + ') and ' + slugs[id] + ' both have the slug "' + id + '"');
    else slugs[id] = where + ' (' + JSON.stringify(name) + ')';
  });
  return { errors: errors };
}

// PLAN runs after CHECK; what it returns as \`data\` the templates read as @plan.
function plan(context, kit) {
  const entities = context.input.discoveryAnswers.entities.map(function (entity) {
    const name = entityName(entity);
    return { name: name, slug: slug(name) };
  });
  kit.log('info', 'summarising', entities.length, 'entities');
  return { data: { entities: entities } };
}
`,
    'templates/readme.md.hbs': `# {{businessProfile.company.name}}

{{#if businessProfile.company.industry}}Industry: {{businessProfile.company.industry}}

{{/if}}
## Entities

{{#each @plan.entities}}
- {{name}}
{{/each}}
`,
    'templates/summary.json.hbs': `{
  "project": {{json projectId}},
  "company": {{json businessProfile.company.name}},
  "entities": {{json @plan.entities 2}},
  "generatedBy": {{json @kit.id}}
}
`,
    'schemas/summary.schema.json': `${JSON.stringify(
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        required: ['company', 'entities', 'generatedBy'],
        properties: {
          project: { type: ['string', 'null'] },
          company: { type: 'string', minLength: 1 },
          entities: { type: 'array', items: { type: 'object', required: ['name', 'slug'], properties: { name: { type: 'string' }, slug: { type: 'string', pattern: '^[a-z0-9-]+$' } } } },
          generatedBy: { type: 'string' },
        },
        additionalProperties: false,
      },
      null,
      2,
    )}\n`,
    'examples/acme.json': `${JSON.stringify(
      {
        projectId: 'example-project',
        businessProfile: { company: { name: 'Acme Rockets', industry: 'aerospace' } },
        discoveryAnswers: { entities: ['Rocket', 'Launch'] },
      },
      null,
      2,
    )}\n`,
    'README.md': `# ${displayName}

A Specwright kit. It needs \`businessProfile.company.name\` and \`discoveryAnswers.entities\` and
produces \`README.md\` and \`summary.json\`. Each entity is a name or an object with a name that has
Latin letters or digits for its slug (\`Größe Ding\` → \`grosse-ding\`); CHECK (\`hooks/plan.js\`)
refuses, naming each, any other and two names with one slug.

\`\`\`sh
npx specwright kit validate .    # manifest, templates, schemas, hooks
npx specwright kit test .        # runs examples/*.json in the sandbox
npx specwright kit publish .     # SPECWRIGHT_URL, SPECWRIGHT_API_KEY, SPECWRIGHT_ORG
\`\`\`
`,
  };
}

/** Writes a new kit into `dir`, which must not exist or be empty. Returns the files written. */
export async function scaffoldKit(dir: string, options: { kitId?: string } = {}): Promise<{ kitId: string; files: string[] }> {
  // An empty path would be the current directory: a kit is made in a directory named for it.
  if (dir === '') throw new ScaffoldError('a kit directory is required');
  const kitId = options.kitId ?? kitIdFromDirectory(dir);
  // The id the manifest will carry, held to the manifest's own rule: a kit made here passes validate.
  const checked = kitIdSchema.safeParse(kitId);
  if (!checked.success) throw new ScaffoldError(`kit id: ${checked.error.issues[0]?.message ?? 'not valid'}`);
  let existing: string[] = [];
  try {
    existing = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new ScaffoldError(`cannot use ${dir}: ${(error as Error).message}`);
  }
  if (existing.length > 0) throw new ScaffoldError(`${dir} is not empty; pick a new directory`);
  const files = scaffoldFiles(kitId);
  try {
    for (const [path, contents] of Object.entries(files)) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      await writeFile(join(dir, path), contents, { flag: 'wx' });
    }
  } catch (error) {
    // A symlink to a folder that is gone reads as missing, then cannot be created: say so.
    const dangling = await lstat(dir).then((info) => info.isSymbolicLink(), () => false);
    throw new ScaffoldError(dangling ? `${dir} is a symbolic link to a folder that does not exist` : `cannot write the kit into ${dir}: ${(error as Error).message}`);
  }
  return { kitId, files: Object.keys(files) };
}

function titleOf(kitId: string): string {
  return kitId.split('-').map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join(' ');
}

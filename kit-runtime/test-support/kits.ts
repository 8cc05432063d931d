/**
 * Kits for the runtime's tests, built as a manifest plus a file map exactly as a kit author would
 * publish them. `hostileKit` wraps one hook or template around a minimal valid manifest.
 */
import { loadKitPackage, type KitFiles, type KitPackage } from '../kit-package.ts';
import type { KitManifest, KitPhase } from '../manifest.schema.ts';

export const exampleInput = {
  projectId: 'p-1',
  businessProfile: { company: { name: 'Acme Rockets', industry: 'aerospace' } },
  discoveryAnswers: { entities: ['Rocket', 'Launch'], database: 'postgres' },
};

export function exampleManifest(): KitManifest {
  return {
    metadata: {
      id: 'service-starter',
      displayName: 'Service starter',
      version: '1.2.0',
      description: 'An OpenAPI document, a compose file and a README.',
      author: 'Specwright',
      kitType: 'file',
    },
    platform: { name: 'generic', category: 'backend' },
    phases: ['SPEC', 'CHECK', 'DISCOVER', 'PLAN', 'VALIDATE', 'APPLY', 'VERIFY'],
    outputs: [
      { id: 'openapi', filename: 'openapi.json', template: 'templates/openapi.json.hbs', outputType: 'json', schema: 'schemas/openapi.schema.json' },
      { id: 'compose', filename: 'deploy/docker-compose.yml', template: 'templates/compose.yml.hbs', outputType: 'yaml', schema: 'schemas/compose.schema.json' },
      { id: 'readme', filename: 'README.md', template: 'templates/readme.md.hbs', outputType: 'markdown' },
    ],
    discovery: { pools: ['discovery/questions.json'] },
    hooks: { SPEC: 'hooks/spec.js', VERIFY: 'hooks/verify.js' },
    partials: { entityList: 'templates/entity-list.hbs' },
    inputs: { required: ['businessProfile.company.name', 'discoveryAnswers.entities'] },
  };
}

export function exampleFiles(): Record<string, string> {
  return {
    'templates/openapi.json.hbs': `{
  "openapi": "3.1.0",
  "info": { "title": {{json businessProfile.company.name}}, "version": {{json @kit.version}} },
  "paths": {
    {{#each @spec.resources}}{{json path}}: { "get": { "summary": {{json (lookup this "summary")}} } }{{#unless @last}},{{/unless}}
    {{/each}}
  }
}
`,
    'templates/compose.yml.hbs': `services:
  api:
    image: {{json @spec.image}}
  db:
    image: {{discoveryAnswers.database}}:17
`,
    'templates/readme.md.hbs': `# {{businessProfile.company.name}}

Industry: {{businessProfile.company.industry}}

## Entities
{{> entityList}}
Questions asked: {{@discovery.pools.[discovery/questions.json].length}}
`,
    'templates/entity-list.hbs': `{{#each discoveryAnswers.entities}}- {{this}}
{{/each}}`,
    'schemas/openapi.schema.json': JSON.stringify({
      type: 'object',
      required: ['openapi', 'info', 'paths'],
      properties: { openapi: { type: 'string', pattern: '^3\\.' }, info: { type: 'object', required: ['title'] }, paths: { type: 'object' } },
    }),
    'schemas/compose.schema.json': JSON.stringify({
      type: 'object',
      required: ['services'],
      properties: { services: { type: 'object', additionalProperties: { type: 'object', required: ['image'] } } },
    }),
    'discovery/questions.json': JSON.stringify([{ id: 'q1', text: 'Which database?' }, { id: 'q2', text: 'Which entities?' }]),
    'hooks/spec.js': `
function spec(context, kit) {
  kit.log('info', 'building spec for', context.input.businessProfile.company.name);
  return {
    image: 'acme/' + context.kit.id + ':' + context.kit.version,
    resources: context.input.discoveryAnswers.entities.map(function (name) {
      return { path: '/' + name.toLowerCase() + 's', summary: 'List ' + name + 's' };
    }),
  };
}
`,
    'hooks/verify.js': `
function verify(context) {
  const missing = context.outputs.filter(function (o) { return o.status === 'invalid'; });
  return { errors: [], warnings: missing.length ? ['invalid outputs'] : [] };
}
`,
  };
}

export function loadOrThrow(manifest: unknown, files: KitFiles, options: { stored?: boolean } = {}): KitPackage {
  const loaded = loadKitPackage({ manifest, files, ...options });
  if (!loaded.ok) throw new Error(`kit does not load: ${JSON.stringify(loaded.problems)}`);
  return loaded.kit;
}

export function exampleKit(): KitPackage {
  return loadOrThrow(exampleManifest(), exampleFiles());
}

/** A kit of one Markdown output, `<id>.md`, rendered at PLAN; with `components`, a composite of them. */
export function markdownKit(id: string, options: { template?: string; components?: KitManifest['components'] } = {}): KitPackage {
  return loadOrThrow(
    {
      metadata: { id, displayName: id, version: '1.0.0', description: '', author: 'test', kitType: options.components ? 'composite' : 'file' },
      platform: { name: 'none', category: 'test' },
      phases: ['PLAN'],
      outputs: [{ id: 'doc', filename: `${id}.md`, template: 'templates/doc.md.hbs', outputType: 'markdown' }],
      discovery: { pools: [] },
      ...(options.components ? { components: options.components } : {}),
    },
    { 'templates/doc.md.hbs': options.template ?? `# ${id}\n` },
  );
}

let hostileCounter = 0;

/**
 * A one-output text kit; `hooks` maps phases to hook sources, `template` replaces the output
 * template, `filename` the output filename. Each call gets its own kit id so pools never mix.
 */
export function hostileKit(options: {
  hooks?: Partial<Record<KitPhase, string>>;
  template?: string;
  filename?: string;
  partials?: Record<string, string>;
  credentials?: KitManifest['credentials'];
  stored?: boolean;
}): KitPackage {
  const hooks = options.hooks ?? {};
  const phases = Object.keys(hooks) as KitPhase[];
  const files: Record<string, string> = { 'templates/out.txt.hbs': options.template ?? 'hello {{name}}\n' };
  const hookFiles: Partial<Record<KitPhase, string>> = {};
  for (const phase of phases) {
    const file = `hooks/${phase.toLowerCase()}.js`;
    files[file] = hooks[phase] as string;
    hookFiles[phase] = file;
  }
  const partialFiles: Record<string, string> = {};
  for (const [name, source] of Object.entries(options.partials ?? {})) {
    files[`partials/${name}.hbs`] = source;
    partialFiles[name] = `partials/${name}.hbs`;
  }
  hostileCounter++;
  return loadOrThrow(
    {
      metadata: { id: `hostile-${hostileCounter}`, displayName: 'Hostile', version: '1.0.0', description: '', author: 'test', kitType: 'file' },
      platform: { name: 'none', category: 'test' },
      phases: phases.length > 0 ? phases : ['PLAN'],
      outputs: [{ id: 'out', filename: options.filename ?? 'out.txt', template: 'templates/out.txt.hbs', outputType: 'text' }],
      discovery: { pools: [] },
      ...(phases.length > 0 ? { hooks: hookFiles } : {}),
      ...(options.partials ? { partials: partialFiles } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
    },
    files,
    { stored: options.stored === true },
  );
}

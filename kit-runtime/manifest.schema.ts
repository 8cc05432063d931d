/**
 * The kit manifest (`kit.json`): the contract between a kit author and the runtime. Parsed with zod
 * for the runtime and exported as JSON Schema for authors' editors and the SDK. Objects are strict
 * so a misspelt key ("output" for "outputs") is an error instead of a silently ignored setting.
 */
import semver from 'semver';
import { z } from 'zod';
import { explainUnsafePath } from './safe-path.ts';
import { hasVisibleCharacter, NO_VISIBLE_CHARACTER } from './visible-text.ts';

/** Execution order; a kit declares the subset it takes part in. */
export const KIT_PHASES = ['SPEC', 'CHECK', 'DISCOVER', 'PLAN', 'VALIDATE', 'APPLY', 'VERIFY'] as const;
export type KitPhase = (typeof KIT_PHASES)[number];

export const KIT_TYPES = ['file', 'platform', 'api', 'hybrid', 'composite'] as const;
export const OUTPUT_TYPES = ['json', 'yaml', 'markdown', 'text', 'code'] as const;
export type OutputType = (typeof OUTPUT_TYPES)[number];

// semver.org's recommended expression (build metadata allowed, no leading "v").
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
/**
 * A version as semver (the library that orders versions) accepts it: at most 256 characters (kits
 * get 128), and major, minor and patch numbers a double holds exactly — it refuses to compare larger
 * ones, so a version like 99999999999999999999.0.0 could be stored but never ordered.
 */
export const kitVersionSchema = z
  .string()
  .max(128, 'a version has at most 128 characters')
  .regex(SEMVER, 'must be a semantic version such as 1.2.0')
  // Only for a version the rules above took, so one mistake gets one message. (Not `abort` on them:
  // that would also stop the refinements of the object around it, which name other fields.)
  .refine((version) => semver.valid(version) !== null, {
    error: `major, minor and patch must each be at most ${Number.MAX_SAFE_INTEGER}`,
    when: (payload) => payload.issues.length === 0,
  });
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const DOTTED_PATH = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*$/;
const FOR_EACH_PATH = /^(?:@(?:spec|plan|discovery)(?:\.[A-Za-z_$][\w$]*)*|[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)$/;

const kitFilePath = z
  .string()
  .describe('Path of a file inside the kit package, relative to kit.json, "/" separated.')
  .superRefine((path, ctx) => {
    const problem = explainUnsafePath(path);
    if (problem) ctx.addIssue({ code: 'custom', message: `file path ${problem}` });
  });

// A filename may be a Handlebars expression ("{{project.slug}}.json"); only a static one can be
// checked here, a rendered one is checked again at run time by the same helper.
const outputFilename = z
  .string()
  .min(1)
  .describe('Name of the produced file; may contain Handlebars expressions.')
  .superRefine((filename, ctx) => {
    if (filename.includes('{{')) return;
    const problem = explainUnsafePath(filename);
    if (problem) ctx.addIssue({ code: 'custom', message: `filename ${problem}` });
  });

const outputSchema = z.strictObject({
  id: z.string().regex(SLUG, 'must be a slug: lowercase letters, digits and hyphens'),
  filename: outputFilename,
  template: kitFilePath.describe('Handlebars template file.'),
  outputType: z.enum(OUTPUT_TYPES),
  schema: kitFilePath.describe('JSON Schema (2020-12) file validating json and yaml outputs.').optional(),
  forEach: z
    .string()
    .regex(FOR_EACH_PATH, 'must be a dotted path into the input, or into @spec, @plan or @discovery, such as @spec.entities')
    .describe('Renders this output once per item of the array at this path; the item is @output.item.')
    .optional(),
});

/** The longest credential id: a stored credential is kept under it (its `credentialType`). */
export const MAX_CREDENTIAL_ID_LENGTH = 100;

const credentialId = z.string().regex(SLUG, 'must be a slug: lowercase letters, digits and hyphens');

const credentialsSchema = (id: z.ZodString) =>
  z
    .array(
      z.strictObject({
        id,
        description: z.string(),
        required: z.boolean(),
        hostOnly: z
          .boolean()
          .describe('true: only host capabilities that take the credential id (kit.gitCommit, kit.gitVerify) open it; hooks never see it (no context.credentials entry).')
          .optional(),
      }),
    )
    .optional();

const componentSchema = z.strictObject({
  kitId: z.string().max(64).regex(SLUG, 'must be a slug: lowercase letters, digits and hyphens'),
  version: kitVersionSchema.optional(),
  prefix: z.string().regex(SLUG, 'must be a slug: lowercase letters, digits and hyphens'),
});

/** Kit ids the registry's routes use (`/{orgId}/kits/executions`, `…/credentials`): a kit of either id could never be read. */
export const RESERVED_KIT_IDS: readonly string[] = ['executions', 'credentials'];

/** A kit's id: a slug of at most 64 characters that the registry's routes leave free. */
export const kitIdSchema = z
  .string()
  .max(64, 'must be at most 64 characters')
  .regex(SLUG, 'must be a slug: lowercase letters, digits and hyphens')
  .refine((id) => !RESERVED_KIT_IDS.includes(id), { error: (issue) => `"${String(issue.input)}" is reserved: the registry's routes use it; choose another id` });

/** Short text shown in the catalogue; the platform's is also returned in every kit list row. */
const MAX_DISPLAY_STRING = 200;
const boundedDisplayString = z.string().min(1).max(MAX_DISPLAY_STRING);
const displayString = boundedDisplayString
  // A name of "   " or "\u200b\u200d" lists as a blank row. Only for text the rules above took, so
  // an empty name gets one message.
  .refine(hasVisibleCharacter, {
    error: NO_VISIBLE_CHARACTER,
    when: (payload) => payload.issues.length === 0,
  });

const platformSchema = z.strictObject({ name: displayString, category: displayString });

export const kitManifestSchema = z
  .strictObject({
    metadata: z.strictObject({
      id: kitIdSchema,
      displayName: displayString,
      version: kitVersionSchema,
      description: z.string().max(5000),
      author: displayString,
      kitType: z.enum(KIT_TYPES),
    }),
    platform: platformSchema,
    phases: z.array(z.enum(KIT_PHASES)).min(1, 'must declare at least one phase'),
    outputs: z.array(outputSchema).max(500),
    discovery: z.strictObject({ pools: z.array(kitFilePath) }),
    hooks: z.partialRecord(z.enum(KIT_PHASES), kitFilePath).optional(),
    partials: z
      .record(z.string().regex(/^[A-Za-z][\w-]*$/, 'must be a simple partial name'), kitFilePath)
      .describe('Handlebars partials by name, usable as {{> name}} from any template.')
      .optional(),
    credentials: credentialsSchema(credentialId.max(MAX_CREDENTIAL_ID_LENGTH, `must be at most ${MAX_CREDENTIAL_ID_LENGTH} characters, the longest id a credential can be stored under`)),
    components: z
      .array(componentSchema)
      .max(20)
      .describe('composite kits: the kits to run with the same input; their outputs are merged under prefix/.')
      .optional(),
    inputs: z
      .strictObject({
        required: z.array(z.string().regex(DOTTED_PATH, 'must be a dotted path such as businessProfile.company.name')),
      })
      .optional(),
  })
  .superRefine((manifest, ctx) => {
    reportDuplicates(manifest.phases, ['phases'], 'phase', ctx);
    reportDuplicates(manifest.outputs.map((o) => o.id), ['outputs'], 'output id', ctx);
    reportDuplicates((manifest.credentials ?? []).map((c) => c.id), ['credentials'], 'credential id', ctx);
    reportDuplicates((manifest.components ?? []).map((c) => c.prefix), ['components'], 'component prefix', ctx);
    const composite = manifest.metadata.kitType === 'composite';
    if (composite && (manifest.components ?? []).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['components'], message: 'a composite kit must declare at least one component' });
    }
    if (!composite && manifest.components !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['components'], message: 'only kits of kitType composite have components' });
    }
    for (const phase of Object.keys(manifest.hooks ?? {}) as KitPhase[]) {
      if (!manifest.phases.includes(phase)) {
        ctx.addIssue({ code: 'custom', path: ['hooks', phase], message: `hook for ${phase}, which is not in phases` });
      }
    }
  });

function reportDuplicates(values: string[], path: PropertyKey[], what: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  values.forEach((value, index) => {
    if (seen.has(value)) ctx.addIssue({ code: 'custom', path: [...path, index], message: `duplicate ${what} "${value}"` });
    seen.add(value);
  });
}

export type KitManifest = z.infer<typeof kitManifestSchema>;
export type KitOutputDeclaration = KitManifest['outputs'][number];
export type KitComponentDeclaration = NonNullable<KitManifest['components']>[number];

/** For authors: editor completion and validation of kit.json. Refinements are not expressible here. */
export const kitManifestJsonSchema = z.toJSONSchema(kitManifestSchema, { target: 'draft-2020-12' });

/**
 * A version published before `platform` or credential ids were bounded, or before display names
 * needed a visible character, keeps loading to run: its stored manifest may hold a longer platform
 * name, category or credential id (a credential it does not require lets it run), or a blank name.
 * Everything else is checked as at publish.
 */
const storedKitManifestSchema = kitManifestSchema.safeExtend({
  metadata: kitManifestSchema.shape.metadata.safeExtend({
    displayName: boundedDisplayString,
    author: boundedDisplayString,
  }),
  platform: z.strictObject({ name: z.string().min(1), category: z.string().min(1) }),
  credentials: credentialsSchema(credentialId),
});

export type ManifestParseResult = { ok: true; manifest: KitManifest } | { ok: false; errors: string[] };

/**
 * Parses a manifest; every error names its path, e.g. `outputs[2].filename: must …`. `stored`: the
 * manifest of a version already published, loaded to run (see `storedKitManifestSchema`).
 */
export function parseKitManifest(input: unknown, options: { stored?: boolean } = {}): ManifestParseResult {
  const result = (options.stored === true ? storedKitManifestSchema : kitManifestSchema).safeParse(input);
  if (result.success) return { ok: true, manifest: result.data };
  return { ok: false, errors: result.error.issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`) };
}

export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? '(manifest)' : out;
}

import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import semver from 'semver';
import { loadKitPackage, MANIFEST_FILE, MAX_COMPOSITION_DEPTH, type KitManifest, type KitPackageProblem } from '../../../kit-runtime/index.ts';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { AppError, conflict } from '../../errors/app-error.ts';
import { createKitPackageChecker } from './kit-package-checker.ts';
import {
  createOwnKitOrLock, findBuiltInKitId, findComponentManifest, findCompositeVersionsNaming, findLatestVersion, findOwnKitForUpdate, findStoredVersion, insertKitVersion, lockOwnKitForShare, pointKitAtVersion, type KitFields,
} from './kits.repository.ts';

/** Checks a kit package the way the runtime will load it; refuses it naming every problem's file. */
export function validateKitPackage(manifest: unknown, files: Record<string, string>): KitManifest {
  const loaded = loadKitPackage({ manifest, files });
  if (!loaded.ok) throw refusalOf(loaded.problems);
  return loaded.kit.manifest;
}

const packageChecker = createKitPackageChecker();

/** `validateKitPackage` on the checker's own thread (kit-package-checker.ts), as a publish request needs. */
export async function validateKitPackageOffThread(manifest: unknown, files: Record<string, string>): Promise<KitManifest> {
  const checked = await packageChecker.check(manifest, files);
  if ('failure' in checked) throw new Error(checked.failure);
  if (!checked.ok) throw refusalOf(checked.problems);
  return checked.manifest;
}

function refusalOf(problems: KitPackageProblem[]): AppError {
  const first = problems[0];
  const summary = first ? `${first.file}${first.line ? `:${first.line}` : ''}: ${first.message}` : 'the kit is invalid';
  return new AppError('VALIDATION_ERROR', `The kit cannot be published — ${summary}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}`, { problems });
}

export function kitFieldsOf(manifest: KitManifest): KitFields {
  return {
    kitId: manifest.metadata.id,
    displayName: manifest.metadata.displayName,
    description: manifest.metadata.description ?? '',
    kitType: manifest.metadata.kitType,
    platformName: manifest.platform.name,
    platformCategory: manifest.platform.category,
  };
}

/**
 * The identity of a published package: its manifest and every file as sent, object keys in code
 * unit order at every depth — the same on every server (localeCompare followed the server's LANG:
 * under sv_SE, `ä.txt` sorts after `z.txt`, and the same package had another checksum), and
 * whatever order a client wrote the keys in (JSON objects have none: the manifest is stored as
 * jsonb, which keeps none either).
 */
export function checksumOf(manifest: unknown, files: Record<string, string>): string {
  return createHash('sha256').update(JSON.stringify(inKeyOrder({ manifest, files }))).digest('hex');
}

/** The checksum versions were stored with before keys were ordered at every depth: only the files' were. */
function checksumInSentOrderOf(manifest: unknown, files: Record<string, string>): string {
  const canonical = JSON.stringify({ manifest, files: Object.fromEntries(Object.keys(files).sort().map((name) => [name, files[name]])) });
  return createHash('sha256').update(canonical).digest('hex');
}

/** A copy of a JSON value whose objects list their keys in code unit order (sort's own, not the locale's). */
function inKeyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inKeyOrder);
  if (value === null || typeof value !== 'object') return value;
  const object = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(object).sort().map((key) => [key, inKeyOrder(object[key])]));
}

/**
 * A kit's latest version is its highest by semver precedence, not its last published: a patch of
 * an old line published after 2.0.0 does not replace it. A prerelease ranks below its release;
 * versions differing only in build metadata rank equal, so the one published first stays latest.
 * The caller holds the kit row (or the boot lock), so two publishes cannot both decide.
 */
export async function pointKitAtVersionIfHighest(db: Kysely<Database>, kitRowId: string, created: { id: string; version: string }, fields: KitFields) {
  if (await becomesLatest(db, kitRowId, created.version)) await pointKitAtVersion(db, kitRowId, created.id, fields);
}

async function becomesLatest(db: Kysely<Database>, kitRowId: string, version: string): Promise<boolean> {
  const latest = await findLatestVersion(db, kitRowId);
  // A stored latest semver cannot order (stored before versions were bounded) ranks lowest.
  return !latest || semver.valid(latest.version) === null || semver.gt(version, latest.version);
}

/**
 * Stores a new immutable version of an organization's kit (creating the kit on its first version),
 * once its package has been checked (`validateKitPackageOffThread`).
 * The same kit id and version again is a CONFLICT, also when two publishes race.
 */
export async function storeKitVersion(
  db: Kysely<Database>,
  owner: { tenantId: string; organizationId: string },
  checked: { manifest: KitManifest; manifestInput: Record<string, unknown>; files: Record<string, string> },
) {
  const { manifest, manifestInput, files } = checked;
  const fields = kitFieldsOf(manifest);
  const version = manifest.metadata.version;
  // The kit is held before its components are checked: see lockOwnKitForShare. A refusal rolls back the row made here.
  const own = await findOwnKitForUpdate(db, owner.organizationId, fields.kitId);
  // A new kit may not take a built-in's id. One the organization published before a release shipped
  // a built-in of that id stays its own (its runs, credentials and composites resolve to it): it
  // takes new versions like any other.
  if (!own && (await findBuiltInKitId(db, fields.kitId))) throw conflict(`The kit id ${fields.kitId} belongs to a built-in kit; choose another id`);
  const kit = own ?? (await createOwnKitOrLock(db, owner, fields));
  const checksum = checksumOf(manifestInput, files);
  await refuseVersionAlreadyPublished(db, { id: kit.id, status: kit.status }, fields, version, (stored) => stored === checksum || stored === checksumInSentOrderOf(manifestInput, files));
  await refuseComponentsThatCannotRun(db, owner, manifest);
  if (await becomesLatest(db, kit.id, version)) await refuseBreakingCompositesAbove(db, owner, manifest);
  const created = await insertKitVersion(db, { tenantId: owner.tenantId, kitRowId: kit.id, version, manifest: manifestInput, files, checksum }).catch(
    rethrowDuplicate(fields.kitId, version),
  );
  await pointKitAtVersionIfHighest(db, kit.id, created, fields);
  return { id: kit.id, kitId: fields.kitId, version, displayName: fields.displayName, status: kit.status, createdAt: created.created_at.toISOString() };
}

/**
 * A composite runs its components from the registry, as kit-runtime's `composeComponents` walks
 * them: each must be a kit the organization can run (its own or a built-in), holding the version
 * named; no kit may come round again below itself (the composite itself first of all, also through
 * another composite: `outer → inner → outer`), and composites nest at most MAX_COMPOSITION_DEPTH − 1
 * deep — else every run of it would fail. Components are resolved as a run would resolve them now
 * (the version named, else the latest).
 */
async function refuseComponentsThatCannotRun(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, manifest: KitManifest): Promise<void> {
  const problems: KitPackageProblem[] = [];
  const manifestOf = componentManifests(db, owner);
  for (const [index, component] of (manifest.components ?? []).entries()) {
    const problem = await whyComponentCannotRun(manifestOf, [manifest.metadata.id], component);
    if (problem) problems.push({ file: MANIFEST_FILE, message: `components[${index}]: ${problem}` });
  }
  if (problems.length > 0) throw refusalOf(problems);
}

type ComponentRef = { kitId: string; version?: string | undefined };
type ComponentManifests = (component: ComponentRef) => Promise<Record<string, unknown> | undefined>;

/** Each component's manifest looked up once per publish: composites below may name the same kits many times. */
function componentManifests(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }): ComponentManifests {
  const found = new Map<string, Promise<Record<string, unknown> | undefined>>();
  return (component) => {
    const key = component.version === undefined ? component.kitId : `${component.kitId}@${component.version}`;
    if (!found.has(key)) found.set(key, lockOwnKitForShare(db, owner.organizationId, component.kitId).then(() => findComponentManifest(db, owner, component)));
    return found.get(key)!;
  };
}

/** `ancestry`: the ids of the composites above the component, the one being published first. */
async function whyComponentCannotRun(manifestOf: ComponentManifests, ancestry: readonly string[], component: ComponentRef): Promise<string | undefined> {
  const chain = [...ancestry, component.kitId].join(' → ');
  const nested = ancestry.length > 1;
  if (ancestry.includes(component.kitId)) return nested ? `kit "${component.kitId}" would include itself: ${chain}` : 'a composite cannot include itself';
  const manifest = await manifestOf(component);
  if (manifest === undefined) {
    const missing =
      component.version !== undefined && (await manifestOf({ kitId: component.kitId })) !== undefined
        ? `kit "${component.kitId}" has no version ${component.version}`
        : `no kit "${component.kitId}" is published in this organization or built in`;
    return nested ? `${missing} (${chain})` : missing;
  }
  const inner = (manifest as { components?: ComponentRef[] }).components ?? [];
  if (inner.length === 0) return undefined;
  // The run of a composite with n composites above it refuses to go on when n + 1 reaches the limit.
  if (ancestry.length + 1 >= MAX_COMPOSITION_DEPTH) return `composites would nest ${ancestry.length + 1} deep, and a run allows ${MAX_COMPOSITION_DEPTH - 1}: ${chain}`;
  for (const next of inner) {
    const problem = await whyComponentCannotRun(manifestOf, [...ancestry, component.kitId], next);
    if (problem) return problem;
  }
  return undefined;
}

/**
 * A composite that names a kit without a version runs that kit's latest version, so a new latest
 * version with components of its own nests every such composite deeper (and those above them).
 * The version is refused when a published composite version would then nest deeper than a run
 * allows, walking the longest chain of composites that would reach it as a run resolves them now.
 */
async function refuseBreakingCompositesAbove(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, manifest: KitManifest): Promise<void> {
  const { id, version } = manifest.metadata;
  if ((manifest.components ?? []).length === 0) return;
  const above = await longestChainAbove(db, owner, { kitId: id, version, isLatest: true }, 1);
  if (above.length === 0) return;
  const published = componentManifests(db, owner);
  const asLatest: ComponentManifests = (component) => (component.kitId === id && component.version === undefined ? Promise.resolve(manifest) : published(component));
  const problem = await whyComponentCannotRun(asLatest, above, { kitId: id });
  if (problem === undefined) return;
  const namer = above[above.length - 1]!;
  throw refusalOf([
    {
      file: MANIFEST_FILE,
      message: `this version would become the latest "${id}", which the published composite "${namer}" runs as it names "${id}" without a version: ${problem}; publish "${namer}" pinning the version of "${id}" it runs first`,
    },
  ]);
}

/**
 * The ids of the longest chain of composites, top first, whose runs would reach `target` (through
 * unpinned names of a latest version, or names pinned to its version). Only chains a run could take
 * matter, so the walk stops at MAX_COMPOSITION_DEPTH kits, `depth` counting `target` and those below it.
 */
async function longestChainAbove(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, target: { kitId: string; version: string; isLatest: boolean }, depth: number): Promise<string[]> {
  if (depth >= MAX_COMPOSITION_DEPTH) return [];
  let longest: string[] = [];
  for (const referrer of await findCompositeVersionsNaming(db, owner, target.kitId)) {
    const components = ((referrer.manifest as { components?: ComponentRef[] }).components ?? []);
    if (!components.some((c) => c.kitId === target.kitId && (c.version === undefined ? target.isLatest : c.version === target.version))) continue;
    const chain = [...(await longestChainAbove(db, owner, { kitId: referrer.kit_id, version: referrer.version, isLatest: referrer.is_latest }, depth + 1)), referrer.kit_id];
    if (chain.length > longest.length) longest = chain;
  }
  return longest;
}

const alreadyPublished = (kitId: string, version: string) => `Kit ${kitId} version ${version} is already published; versions are immutable — publish a new version`;

/**
 * The same version again is a CONFLICT, checked under the kit's lock before the package's
 * components are. A package identical to the one stored (a publish retried after its answer was
 * lost) is told so, in words and in `details` a client can act on without reading them:
 * `{samePackage: true, published}`, `published` being what the publish that stored it answered.
 * Only this case carries them. `isThisPackage`: whether a stored checksum is this package's, also as
 * a version stored before keys were ordered at every depth carries it (worked out only then: it
 * serialises the whole package again).
 */
async function refuseVersionAlreadyPublished(db: Kysely<Database>, kit: { id: string; status: string }, fields: KitFields, version: string, isThisPackage: (storedChecksum: string) => boolean): Promise<void> {
  const stored = await findStoredVersion(db, kit.id, version);
  if (stored === undefined) return;
  if (!isThisPackage(stored.checksum)) throw conflict(alreadyPublished(fields.kitId, version));
  const published = { id: kit.id, kitId: fields.kitId, version, displayName: fields.displayName, status: kit.status, createdAt: stored.created_at.toISOString() };
  throw conflict(`Kit ${fields.kitId} version ${version} is already published, with this very package (a publish retried after its answer was lost?): it is in place, and nothing changed`, {
    samePackage: true,
    published,
  });
}

/** The unique index has the last word: a duplicate it refuses is a CONFLICT too, never a 500. */
function rethrowDuplicate(kitId: string, version: string) {
  return (error: unknown): never => {
    if (isUniqueViolation(error)) throw conflict(alreadyPublished(kitId, version));
    throw error;
  };
}

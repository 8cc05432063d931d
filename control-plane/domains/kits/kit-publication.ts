import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import semver from 'semver';
import { loadKitPackage, MANIFEST_FILE, type KitManifest, type KitPackageProblem } from '../../../kit-runtime/index.ts';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/postgres-errors.ts';
import { AppError, conflict } from '../../errors/app-error.ts';
import { createKitPackageChecker } from './kit-package-checker.ts';
import { createOwnKitOrLock, findBuiltInKitId, findLatestVersion, componentExists, findOwnKitForUpdate, insertKitVersion, pointKitAtVersion, type KitFields } from './kits.repository.ts';

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
  if (checked.ok) return checked.manifest;
  if ('failure' in checked) throw new Error(checked.failure);
  throw refusalOf(checked.problems);
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
 * The identity of a published package: its manifest and every file as sent, in name order — code
 * unit order, the same on every server (localeCompare followed the server's LANG: under sv_SE,
 * `ä.txt` sorts after `z.txt`, and the same package had another checksum).
 */
export function checksumOf(manifest: unknown, files: Record<string, string>): string {
  const canonical = JSON.stringify({ manifest, files: Object.fromEntries(Object.keys(files).sort().map((name) => [name, files[name]])) });
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * A kit's latest version is its highest by semver precedence, not its last published: a patch of
 * an old line published after 2.0.0 does not replace it. A prerelease ranks below its release;
 * versions differing only in build metadata rank equal, so the one published first stays latest.
 * The caller holds the kit row (or the boot lock), so two publishes cannot both decide.
 */
export async function pointKitAtVersionIfHighest(db: Kysely<Database>, kitRowId: string, created: { id: string; version: string }, fields: KitFields) {
  const latest = await findLatestVersion(db, kitRowId);
  // A stored latest semver cannot order (stored before versions were bounded) ranks lowest.
  if (latest && semver.valid(latest.version) !== null && !semver.gt(created.version, latest.version)) return;
  await pointKitAtVersion(db, kitRowId, created.id, fields);
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
  await refuseComponentsThatCannotRun(db, owner, manifest);
  const fields = kitFieldsOf(manifest);
  const version = manifest.metadata.version;
  if (await findBuiltInKitId(db, fields.kitId)) throw conflict(`The kit id ${fields.kitId} belongs to a built-in kit; choose another id`);
  const kit = (await findOwnKitForUpdate(db, owner.organizationId, fields.kitId)) ?? (await createOwnKitOrLock(db, owner, fields));
  const created = await insertKitVersion(db, { tenantId: owner.tenantId, kitRowId: kit.id, version, manifest: manifestInput, files, checksum: checksumOf(manifestInput, files) }).catch(
    rethrowDuplicate(fields.kitId, version),
  );
  await pointKitAtVersionIfHighest(db, kit.id, created, fields);
  return { id: kit.id, kitId: fields.kitId, version, displayName: fields.displayName, status: kit.status, createdAt: created.created_at.toISOString() };
}

/**
 * A composite runs its components from the registry: each must be a kit the organization can run
 * (its own or a built-in), holding the version named, and not the composite itself — else every
 * run of it would fail.
 */
async function refuseComponentsThatCannotRun(db: Kysely<Database>, owner: { tenantId: string; organizationId: string }, manifest: KitManifest): Promise<void> {
  const problems: KitPackageProblem[] = [];
  for (const [index, component] of (manifest.components ?? []).entries()) {
    const problem = await whyComponentCannotRun(db, owner, manifest.metadata.id, component);
    if (problem) problems.push({ file: MANIFEST_FILE, message: `components[${index}]: ${problem}` });
  }
  if (problems.length > 0) throw refusalOf(problems);
}

async function whyComponentCannotRun(
  db: Kysely<Database>,
  owner: { tenantId: string; organizationId: string },
  compositeId: string,
  component: { kitId: string; version?: string | undefined },
): Promise<string | undefined> {
  if (component.kitId === compositeId) return 'a composite cannot include itself';
  if (await componentExists(db, owner, component)) return undefined;
  if (component.version !== undefined && (await componentExists(db, owner, { kitId: component.kitId }))) return `kit "${component.kitId}" has no version ${component.version}`;
  return `no kit "${component.kitId}" is published in this organization or built in`;
}

function rethrowDuplicate(kitId: string, version: string) {
  return (error: unknown): never => {
    if (isUniqueViolation(error)) throw conflict(`Kit ${kitId} version ${version} is already published; versions are immutable — publish a new version`);
    throw error;
  };
}

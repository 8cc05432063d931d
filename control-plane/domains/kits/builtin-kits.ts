import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.ts';
import { isDatabaseUnavailable, isTransactionConflict } from '../../db/postgres-errors.ts';
import { parseKitManifest } from '../../../kit-runtime/index.ts';
import type { Logger } from '../../logger.ts';
import { checksumOf, kitFieldsOf, pointKitAtVersionIfHighest, validateKitPackage } from './kit-publication.ts';
import { findBuiltInKitId, insertKit, insertKitVersion, listVersions } from './kits.repository.ts';

const builtInKitsDirectory = fileURLToPath(new URL('../../../kits', import.meta.url));

interface ManifestFileRefs {
  outputs?: Array<{ template?: string; schema?: string }>;
  hooks?: Record<string, string>;
  partials?: Record<string, string>;
  discovery?: { pools?: string[] };
}

/** Every file a manifest references — exactly what a publish uploads. */
export function referencedFiles(manifest: ManifestFileRefs): string[] {
  const paths = [
    ...(manifest.outputs ?? []).flatMap((output) => [output.template, output.schema]),
    ...Object.values(manifest.hooks ?? {}),
    ...Object.values(manifest.partials ?? {}),
    ...(manifest.discovery?.pools ?? []),
  ];
  return [...new Set(paths.filter((path): path is string => typeof path === 'string'))];
}

export async function readKitDirectory(directory: string): Promise<{ manifest: Record<string, unknown>; files: Record<string, string> }> {
  const manifest = JSON.parse(await readFile(join(directory, 'kit.json'), 'utf8')) as Record<string, unknown>;
  const files: Record<string, string> = {};
  for (const path of referencedFiles(manifest as ManifestFileRefs)) {
    const full = join(directory, path);
    if (existsSync(full)) files[path] = await readFile(full, 'utf8');
  }
  return { manifest, files };
}

/**
 * Registers the kits shipped in `kits/` as built-in kits (visible to every tenant, read-only). A
 * version already registered is left alone — versions are immutable — so this is safe on every boot;
 * an older version registered after a newer one (a rolled-back deploy) is stored but not made latest.
 */
export async function registerBuiltInKits(owner: Kysely<Database>, log: Logger, directory = builtInKitsDirectory): Promise<string[]> {
  if (!existsSync(directory)) return [];
  const registered: string[] = [];
  const entries = await readdir(directory, { withFileTypes: true });
  // In code unit order (sort's own): the same on every machine, whatever its locale.
  const kitDirectories = entries.filter((e) => e.isDirectory() && existsSync(join(directory, e.name, 'kit.json'))).map((e) => e.name).sort();
  for (const name of kitDirectories) {
    try {
      const { manifest, files } = await readKitDirectory(join(directory, name));
      const { id: kitId, version } = declaredVersion(manifest);
      await owner.transaction().execute(async (trx) => {
        const known = await findBuiltInKitId(trx, kitId);
        if (known && (await listVersions(trx, known.id)).some((stored) => stored.version === version)) return;
        // Only a version not registered yet pays for compiling its templates and schemas.
        const fields = kitFieldsOf(validateKitPackage(manifest, files));
        const kit = known ?? (await insertKit(trx, { tenantId: null, organizationId: null }, fields));
        const created = await insertKitVersion(trx, { tenantId: null, kitRowId: kit.id, version, manifest, files, checksum: checksumOf(manifest, files) });
        await pointKitAtVersionIfHighest(trx, kit.id, created, fields);
      });
      registered.push(`${kitId}@${version}`);
    } catch (error) {
      // A lost connection (a failover, a restart of PostgreSQL) is not the kit's fault and passes:
      // the start fails, as one whose migrations fail does, rather than run without the kit until
      // the next restart. A kit that does not load is skipped on every start alike.
      if (isDatabaseUnavailable(error) || isTransactionConflict(error)) throw error;
      log.error({ err: error, kit: name }, 'a built-in kit could not be registered');
    }
  }
  return registered;
}

/** The id and version a kit directory declares, read without compiling anything. */
function declaredVersion(manifest: unknown): { id: string; version: string } {
  const parsed = parseKitManifest(manifest);
  if (!parsed.ok) throw new Error(`kit.json is not a valid manifest: ${parsed.errors.join('; ')}`);
  return parsed.manifest.metadata;
}

import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, SpecificationRow } from '../../db/database.ts';
import { conflict, forbidden, notFound } from '../../errors/app-error.ts';
import { quotedId } from '../../errors/quoted-input.ts';
import { invalidDownloadLink, type DownloadLinks, type ExportTarget } from '../../http/download-links.ts';
import { apiKeyIsActive } from '../api-keys/api-keys.service.ts';
import { projectScopeFor } from '../projects/project-scope.ts';
import { findProject } from '../projects/projects.repository.ts';
import { findLatestCompletedSpecification, findSpecification } from '../specifications/specifications.repository.ts';
import type { CompiledSpec } from '../specifications/specifications.schema.ts';
import { exportParts, type ExportPart } from './export-contents.ts';
import { buildExportPack } from './export-pack.ts';
import type { DownloadExportInput } from './exports.schema.ts';

/** The parts asked for: the specification unless left out, and each other part named true. */
function partsOf(include: DownloadExportInput['include']): ExportPart[] {
  return exportParts.filter((part) => (part === 'spec' ? include?.spec !== false : include?.[part] === true));
}

/** The parts asked for that the specification was not compiled with (a task graph, a runbook). */
function missingParts(specification: SpecificationRow, parts: readonly ExportPart[]): ExportPart[] {
  const spec = specification.spec as unknown as CompiledSpec;
  return parts.filter((part) => (part === 'taskGraph' && !spec.taskGraph) || (part === 'runbook' && !spec.runbook));
}

/** The pack of a completed specification, in the parts and format asked for (the same bytes every time). */
function packOf(specification: SpecificationRow, format: ExportTarget['format'], parts: readonly ExportPart[]) {
  return buildExportPack(
    specification.spec as unknown as CompiledSpec,
    { projectId: specification.project_id, specificationId: specification.id, version: specification.version, compiledAt: specification.compiled_at ?? specification.created_at },
    format,
    parts,
  );
}

/**
 * An export pack of the project's specification (its latest completed one unless `specId` names
 * another), as a signed download link for whoever sees the project (customers included). The pack
 * is built now to say its size and contents, and built again, byte for byte, when the link is used:
 * nothing is stored.
 */
export async function downloadExport(db: Kysely<Database>, principal: Principal, links: DownloadLinks, input: DownloadExportInput) {
  const project = await findProject(db, projectScopeFor(principal), input.projectId);
  if (!project) throw notFound('The project');
  const specification = input.specId
    ? await findSpecification(db, project.tenant_id, input.specId)
    : await findLatestCompletedSpecification(db, project.tenant_id, project.id);
  if (input.specId && (!specification || specification.project_id !== project.id)) throw notFound(`Specification ${quotedId(input.specId)} of this project`);
  if (!specification) throw conflict('The project has no compiled specification yet: POST /specification/compile (or /agents/generate-spec) first');
  if (specification.status !== 'completed') throw conflict(`Specification ${quotedId(specification.id)} is ${specification.status}, not completed`);
  const parts = partsOf(input.include);
  const missing = missingParts(specification, parts);
  if (missing.length > 0) {
    const option = missing.map((part) => (part === 'taskGraph' ? 'includeTaskGraph' : 'includeRunbook')).join(' and ');
    throw conflict(`Version ${specification.version} of the specification has no ${missing.join(' or ')}: compile it with ${option}`);
  }
  if (parts.length === 0 && input.format !== 'mcp') throw conflict('The pack would hold nothing: include at least one part');
  // The link is checked on each download against its holder's memberships and key in the project's
  // tenant; a platform admin acting in another tenant has neither there, so their link would never serve.
  if (principal.tenantId !== principal.homeTenantId) {
    throw forbidden(`Export links are handed out in your own tenant: acting in another tenant, read the specification with GET /specification/${specification.id}`);
  }
  const pack = await packOf(specification, input.format, parts);
  const link = links.create({
    kind: 'export',
    tenantId: project.tenant_id,
    holder: { userId: principal.userId, apiKeyId: principal.apiKeyId },
    projectId: project.id,
    specificationId: specification.id,
    format: input.format,
    include: parts,
    filename: `specification-${specification.version}-${input.format}.zip`,
  });
  return {
    downloadUrl: link.path,
    expiresAt: link.expiresAt.toISOString(),
    size: pack.sizeBytes,
    sha256: pack.sha256,
    specId: specification.id,
    version: String(specification.version),
    contents: ['manifest.json', ...pack.entries.map((entry) => entry.name)],
  };
}

/**
 * The pack a link names, for its holder while they still may have it: their key still active (when
 * they asked with one), the project still theirs to see, the specification still its own.
 */
export async function exportForDownload(db: Kysely<Database>, target: ExportTarget) {
  const holder = { tenantId: target.tenantId, userId: target.holder.userId };
  const mayRead =
    (target.holder.apiKeyId === undefined || (await apiKeyIsActive(db, holder, target.holder.apiKeyId))) &&
    (await findProject(db, { tenantId: target.tenantId, userId: target.holder.userId }, target.projectId)) !== undefined;
  if (!mayRead) throw invalidDownloadLink();
  const specification = await findSpecification(db, target.tenantId, target.specificationId);
  const parts = exportParts.filter((part) => target.include.includes(part));
  if (!specification || specification.project_id !== target.projectId || specification.status !== 'completed' || missingParts(specification, parts).length > 0) {
    throw notFound('The file behind this link');
  }
  const pack = await packOf(specification, target.format, parts);
  return { content: pack.buffer, contentType: 'application/zip', sha256: pack.sha256 };
}

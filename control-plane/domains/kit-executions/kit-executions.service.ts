import { z } from 'zod';
import type { Kysely } from 'kysely';
import type { Principal } from '../../auth/principal.ts';
import type { Database, KitExecutionStatus } from '../../db/database.ts';
import { AppError, invalid, notFound } from '../../errors/app-error.ts';
import { quotedId } from '../../errors/quoted-input.ts';
import { invalidDownloadLink, type BundleTarget, type DownloadLinks } from '../../http/download-links.ts';
import type { Paging } from '../../http/paging.ts';
import { addJob } from '../../jobs/add-job.ts';
import { kitInputOfSpecification } from '../specifications/specifications.service.ts';
import { apiKeyIsActive } from '../api-keys/api-keys.service.ts';
import { readBlob, readBlobDescription, readBlobMeta } from '../blobs/blobs.repository.ts';
import { kitsEnabledFor, requireKitAccess, requireOrganizationKitFilter, requireOrganizationProject } from '../kits/kit-access.ts';
import { holdsOrganizationRole } from '../organizations/organization-access.ts';
import { requireKit } from '../kits/kits.service.ts';
import { getsBundle } from './kit-bundle.job.ts';
import { EXECUTION_JOB_ATTEMPTS, executeKitJob } from './kit-execution.job.ts';
import type { ExecuteKitInput, ExecutionDetail, ExecutionSummary } from './kit-executions.schema.ts';
import { executionJobKey } from './execution-job-keys.ts';
import {
  findExecution,
  findOutput,
  findVersionOfKit,
  countWaitingExecutions,
  insertExecution,
  listExecutions,
  listOutputSummaries,
  recordWorkerRun,
  type ExecutionRow,
} from './kit-executions.repository.ts';

const iso = (value: Date | null) => value?.toISOString() ?? null;

/**
 * "building" from the transaction that ends the execution and enqueues its bundle job — failed ones
 * included — until the bundle is attached ("ready") or cannot be built ("failed").
 */
function bundleStatusOf(row: ExecutionRow): 'none' | 'building' | 'ready' | 'failed' {
  if (row.bundle_blob_id) return 'ready';
  if (row.bundle_error || bundleNoLongerStored(row)) return 'failed';
  const ended = row.status !== 'pending' && row.status !== 'running';
  return ended && getsBundle({ valid: row.outputs_valid, warnings: row.outputs_warnings }) ? 'building' : 'none';
}

/**
 * A bundle that was attached and whose blob has gone since: the blob's foreign key clears
 * `bundle_blob_id` and leaves the path it was attached with. No job will build it again, so it must
 * not read "building" (and GET …/bundle "try again in a moment") for good.
 */
function bundleNoLongerStored(row: ExecutionRow): boolean {
  return row.bundle_blob_id === null && row.bundle_path !== null;
}

const BUNDLE_NO_LONGER_STORED = 'The bundle of this execution is no longer stored. Start a new execution.';

function executionRowToSummary(row: ExecutionRow): ExecutionSummary {
  return {
    id: row.id,
    kitId: row.kit_id,
    kitVersion: row.version,
    projectId: row.project_id,
    status: row.status,
    startedAt: iso(row.started_at),
    completedAt: iso(row.completed_at),
    executionTimeMs: row.execution_time_ms,
    outputCount: row.outputs_valid + row.outputs_warnings + row.outputs_failed,
    outputsValid: row.outputs_valid,
    outputsWarnings: row.outputs_warnings,
    outputsFailed: row.outputs_failed,
    tokenUsageTotal: row.token_usage.total,
    estimatedCostUsd: Number(row.estimated_cost_usd).toFixed(6),
    errorMessage: row.error_message,
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * Starts a kit execution: the row and its job are written in the caller's transaction, so either
 * both exist or neither does. The worker does the rest; clients poll the execution.
 */
export async function startKitExecution(db: Kysely<Database>, principal: Principal, input: ExecuteKitInput) {
  await requireKitAccess(db, principal, input.orgId);
  const kit = await requireKit(db, input.orgId, input.kitId);
  const version = input.version ? await findVersionOfKit(db, kit.id, input.version) : kit.version_id ? { id: kit.version_id, version: kit.version! } : undefined;
  if (!version) throw notFound(`Version ${input.version === undefined ? '(latest)' : quotedId(input.version)} of kit ${quotedId(input.kitId)}`);
  if (kit.status === 'draft') throw invalid(`Kit ${quotedId(input.kitId)} is a draft and cannot be executed`);
  const project = await requireOrganizationProject(db, principal, input.orgId, input.projectId);
  const execution = await insertExecution(db, {
    tenantId: principal.tenantId,
    organizationId: input.orgId,
    projectId: project.id,
    kitRowId: kit.id,
    kitVersionId: version.id,
    input: {
      projectId: project.id,
      project: { id: project.id, name: project.name, description: project.description, metadata: project.metadata },
      businessProfile: input.businessProfile,
      discoveryAnswers: input.specificationId ? { ...(await kitInputOfSpecification(db, principal.tenantId, project.id, input.specificationId)), ...input.discoveryAnswers } : input.discoveryAnswers,
    },
    options: input.options,
    createdBy: principal.userId,
    startedWithApiKeyId: principal.apiKeyId ?? null,
  });
  // Fair turns between tenants: a tenant's k-th waiting execution runs at priority k (lowest first),
  // so another tenant's first one goes ahead of the rest of a backlog instead of behind all of it.
  const priority = await countWaitingExecutions(db, principal.tenantId, execution.id);
  // The payload names the execution only: inputs and secrets stay in the database.
  const jobId = await addJob(db, executeKitJob.name, { executionId: execution.id, tenantId: principal.tenantId }, { jobKey: executionJobKey(execution.id), priority, maxAttempts: EXECUTION_JOB_ATTEMPTS });
  await recordWorkerRun(db, execution.id, jobId);
  return { executionId: execution.id, status: 'pending' as const, workerRunId: jobId, createdAt: execution.created_at.toISOString() };
}

export async function listKitExecutions(
  db: Kysely<Database>,
  principal: Principal,
  input: Paging & { orgId: string; projectId?: string | undefined; kitId?: string | undefined; status?: KitExecutionStatus | undefined },
) {
  await requireKitAccess(db, principal, input.orgId);
  if (input.projectId) await requireOrganizationProject(db, principal, input.orgId, input.projectId, 'forRead');
  if (input.kitId) await requireOrganizationKitFilter(db, input.orgId, input.kitId);
  const { rows, ...page } = await listExecutions(db, principal.tenantId, input.orgId, input);
  return { executions: rows.map(executionRowToSummary), ...page };
}

async function requireExecution(db: Kysely<Database>, principal: Principal, orgId: string, executionId: string) {
  await requireKitAccess(db, principal, orgId);
  const row = await findExecution(db, principal.tenantId, orgId, executionId);
  if (!row) throw notFound('The execution');
  return row;
}

export async function getKitExecution(db: Kysely<Database>, principal: Principal, input: { orgId: string; executionId: string }): Promise<ExecutionDetail> {
  const row = await requireExecution(db, principal, input.orgId, input.executionId);
  const outputs = await listOutputSummaries(db, principal.tenantId, row.id);
  return {
    ...executionRowToSummary(row),
    options: { dryRun: row.options.dryRun === true, skipApply: row.options.skipApply === true },
    phases: row.phases,
    logs: row.logs,
    applyResult: row.apply_result ?? null,
    verifyWarnings: row.verify_warnings,
    outputs: outputs.map((output) => ({
      id: output.id,
      outputId: output.output_id,
      filename: output.filename,
      status: output.status,
      contentSizeBytes: output.content_size_bytes,
      validationErrors: output.validation_errors,
      validationWarnings: output.validation_warnings,
    })),
    tokenUsage: row.token_usage,
    bundleStatus: bundleStatusOf(row),
    // Where the bundle is, only while it is there.
    bundlePath: row.bundle_blob_id ? row.bundle_path : null,
    bundleSizeBytes: row.bundle_blob_id ? row.bundle_size_bytes : null,
  };
}

const isUuid = (value: string) => z.uuid().safeParse(value).success;

export async function getKitOutput(db: Kysely<Database>, principal: Principal, input: { orgId: string; executionId: string; outputId: string }) {
  const row = await requireExecution(db, principal, input.orgId, input.executionId);
  // The output's row id or the id the manifest gives it.
  const output = await findOutput(db, principal.tenantId, row.id, input.outputId, isUuid(input.outputId));
  if (!output) throw notFound(`Output ${quotedId(input.outputId)} of this execution`);
  return {
    id: output.id,
    outputId: output.output_id,
    filename: output.filename,
    contentType: output.content_type,
    content: output.content,
    contentSizeBytes: output.content_size_bytes,
    status: output.status,
    validationErrors: output.validation_errors,
    validationWarnings: output.validation_warnings,
    createdAt: output.created_at.toISOString(),
  };
}

export async function getBundleLink(db: Kysely<Database>, principal: Principal, links: DownloadLinks, input: { orgId: string; executionId: string }) {
  const row = await requireExecution(db, principal, input.orgId, input.executionId);
  const blob = row.bundle_blob_id ? await readBlobMeta(db, principal.tenantId, row.bundle_blob_id) : undefined;
  if (!blob) {
    const bundleStatus = bundleStatusOf(row);
    if (row.bundle_blob_id || bundleNoLongerStored(row)) throw new AppError('CONFLICT', BUNDLE_NO_LONGER_STORED, { status: row.status, bundleStatus: 'failed' });
    if (bundleStatus === 'failed') {
      throw new AppError('CONFLICT', `The bundle of this execution could not be built: ${row.bundle_error}. Start a new execution.`, { status: row.status, bundleStatus });
    }
    const why =
      row.status === 'pending' || row.status === 'running'
        ? 'has not finished yet'
        : bundleStatus === 'building'
          ? 'has finished and its bundle is being built; try again in a moment'
          : 'produced no valid outputs to bundle';
    throw new AppError('CONFLICT', `This execution ${why}`, { status: row.status, bundleStatus });
  }
  const outputs = await listOutputSummaries(db, principal.tenantId, row.id);
  const link = links.create({
    tenantId: principal.tenantId,
    holder: { userId: principal.userId, apiKeyId: principal.apiKeyId },
    organizationId: input.orgId,
    executionId: row.id,
    blobId: blob.id,
    filename: `${row.kit_id}-${row.version}-${row.id.slice(0, 8)}.zip`,
  });
  return {
    downloadUrl: link.path,
    expiresAt: link.expiresAt.toISOString(),
    sizeBytes: blob.sizeBytes,
    sha256: blob.sha256,
    contents: ['manifest.json', ...outputs.filter((o) => o.status !== 'invalid').map((o) => o.filename)],
  };
}

/**
 * The bundle a download link names, read for the holder it was handed to — only while they may
 * still read it, as GET …/bundle asks: removed from the organization, below member, kits switched
 * off for the tenant, or the API key they asked with revoked, and the link stops serving within its
 * 15 minutes. Such a link answers as a forged one does; an execution or bundle gone since (the
 * project deleted) is NOT_FOUND, which only a holder still entitled to it is told.
 */
export function readBundleForDownload(db: Kysely<Database>, target: BundleTarget) {
  return bundleForDownload(db, target, readBlob);
}

/** What a HEAD of a download link answers: the bundle's type, length and digest, checked as readBundleForDownload checks, its bytes left unread. */
export function describeBundleForDownload(db: Kysely<Database>, target: BundleTarget) {
  return bundleForDownload(db, target, readBlobDescription);
}

async function bundleForDownload<Found>(
  db: Kysely<Database>,
  target: BundleTarget,
  read: (db: Kysely<Database>, tenantId: string, blobId: string) => Promise<Found | undefined>,
): Promise<Found> {
  const holder = { tenantId: target.tenantId, userId: target.holder.userId };
  // What requireKitAccess asks of a caller, as yes or no (an organization gone holds no member).
  const mayRead =
    (target.holder.apiKeyId === undefined || (await apiKeyIsActive(db, holder, target.holder.apiKeyId))) &&
    (await kitsEnabledFor(db, target.tenantId)) &&
    (await holdsOrganizationRole(db, holder, target.organizationId, 'member'));
  if (!mayRead) throw invalidDownloadLink();
  const row = await findExecution(db, target.tenantId, target.organizationId, target.executionId);
  const blob = row?.bundle_blob_id === target.blobId ? await read(db, target.tenantId, target.blobId) : undefined;
  if (!blob) throw new AppError('NOT_FOUND', 'The file behind this link no longer exists');
  return blob;
}

import { z } from 'zod';
import { kitVersionSchema } from '../../../kit-runtime/index.ts';
import { pagingInput } from '../../http/paging.ts';
import { kitIdInput, kitRefInput, orgInput } from '../kits/kits.schema.ts';
import { refuseUnstorableText } from '../../db/storable-text.ts';
import { storedJsonAtMost } from '../../db/stored-json-size.ts';
import { uuidInput } from '../../http/uuid-input.ts';

export const executionStatuses = ['pending', 'running', 'completed', 'failed', 'partial'] as const;
const outputStatuses = ['valid', 'warning', 'invalid'] as const;

/**
 * An execution's inputs are stored with its row (jsonb), loaded whole by the worker that claims it
 * and copied as JSON into the kit's sandbox for every hook; bounded only by the 1 MiB body, a body
 * of `1e308`s was stored as 50 MB of digits. Each field is measured as PostgreSQL stores it and
 * bounded on its own, so a refusal names the one that is too large: the discovery interview's free
 * text gets room for a hundred pages and more, the company's profile a quarter of that.
 */
const BUSINESS_PROFILE_MAX_BYTES = 65_536;
const DISCOVERY_ANSWERS_MAX_BYTES = 262_144;

const storedSize = (bytes: number) => `At most ${bytes} bytes as JSON, numbers counted as stored (without exponent: 1e308 is 309 digits)`;
const businessProfileInput = z.looseObject({ company: z.looseObject({ name: z.string().min(1).max(500), industry: z.string().min(1).max(200) }) });

export const executeKitInput = kitRefInput
  .extend({
    projectId: uuidInput(),
    businessProfile: storedJsonAtMost(businessProfileInput, BUSINESS_PROFILE_MAX_BYTES).describe(storedSize(BUSINESS_PROFILE_MAX_BYTES)),
    discoveryAnswers: storedJsonAtMost(z.record(z.string(), z.unknown()), DISCOVERY_ANSWERS_MAX_BYTES).default({}).describe(storedSize(DISCOVERY_ANSWERS_MAX_BYTES)),
    specificationId: uuidInput()
      .optional()
      .describe("A completed specification of the project (POST /specification/compile): its entities, with their fields and operations, are the discoveryAnswers' entities unless discoveryAnswers names its own"),
    options: z.strictObject({ dryRun: z.boolean().default(false), skipApply: z.boolean().default(false) }).default({ dryRun: false, skipApply: false }),
    version: kitVersionSchema.optional().describe('A published version (semver, as its manifest gives it); the latest when absent'),
  })
  .strict()
  .superRefine(refuseUnstorableText);

export const executionCreatedOutput = z.object({
  executionId: z.uuid(),
  status: z.literal('pending'),
  workerRunId: z.string(),
  createdAt: z.iso.datetime(),
});

export const executionSummaryOutput = z.object({
  id: z.uuid(),
  kitId: z.string(),
  kitVersion: z.string(),
  projectId: z.uuid(),
  status: z.enum(executionStatuses),
  startedAt: z.iso.datetime().nullable(),
  completedAt: z.iso.datetime().nullable(),
  executionTimeMs: z.number().int().nullable(),
  outputCount: z.number().int(),
  outputsValid: z.number().int(),
  outputsWarnings: z.number().int(),
  outputsFailed: z.number().int(),
  tokenUsageTotal: z.number().int(),
  estimatedCostUsd: z.string(),
  errorMessage: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

export const executionOutputSummary = z.object({
  id: z.uuid(),
  outputId: z.string(),
  filename: z.string(),
  status: z.enum(outputStatuses),
  contentSizeBytes: z.number().int(),
  validationErrors: z.array(z.string()),
  validationWarnings: z.array(z.string()),
});

export const executionDetailOutput = executionSummaryOutput.extend({
  options: z.object({ dryRun: z.boolean(), skipApply: z.boolean() }),
  phases: z.array(
    z.object({ phase: z.string(), status: z.string(), durationMs: z.number(), detail: z.string().optional().describe('Why the step was skipped') }),
  ),
  logs: z
    .array(z.object({ phase: z.string(), level: z.enum(['debug', 'info', 'warn', 'error']), message: z.string() }))
    .describe("What the kit's hooks logged (kit.log, console.*), oldest first: secrets redacted, the first 200 lines kept"),
  applyResult: z
    .unknown()
    .nullable()
    .describe('What the APPLY hook returned (a commit, a deployment …), secrets redacted; null when APPLY did not run or returned more than 64 KiB of JSON (a log line then says so)'),
  verifyWarnings: z.array(z.string()).describe('What the VERIFY hook warned about'),
  outputs: z.array(executionOutputSummary),
  tokenUsage: z.object({ prompt: z.number().int(), completion: z.number().int(), total: z.number().int() }),
  bundleStatus: z
    .enum(['none', 'building', 'ready', 'failed'])
    .describe('ready: GET …/bundle answers with a link; building: shortly after the execution ends; failed: it could not be built, or is no longer stored (GET …/bundle says why)'),
  bundlePath: z.string().nullable().describe('Where the bundle is stored; null unless bundleStatus is ready'),
  bundleSizeBytes: z.number().int().nullable().describe('null unless bundleStatus is ready'),
});

export const listExecutionsInput = orgInput.extend(pagingInput.shape).extend({
  projectId: uuidInput().describe('A project of this organization; any other project is NOT_FOUND').optional(),
  kitId: kitIdInput.describe('A kit the organization can run (its own or a built-in one); any other is NOT_FOUND').optional(),
  status: z.enum(executionStatuses).optional(),
});

export const listExecutionsOutput = z.object({
  executions: z.array(executionSummaryOutput),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});

export const executionRefInput = orgInput.extend({ executionId: uuidInput() });
/**
 * An output's row id or its manifest id. A manifest id is a slug of any length, and a run makes
 * longer ones still (`<prefix>.<id>` in a composite, `<id>.<index>` for forEach): bounded here only
 * by what a request line carries (Node's 16 KiB of headers), so every id the detail lists can be read.
 */
export const outputRefInput = executionRefInput.extend({ outputId: z.string().min(1).max(16_384).superRefine(refuseUnstorableText) });

export const outputContentOutput = z.object({
  id: z.uuid(),
  outputId: z.string(),
  filename: z.string(),
  contentType: z.string(),
  content: z.string(),
  contentSizeBytes: z.number().int(),
  status: z.enum(outputStatuses),
  validationErrors: z.array(z.string()),
  validationWarnings: z.array(z.string()),
  createdAt: z.iso.datetime(),
});

export const bundleLinkOutput = z.object({
  downloadUrl: z.string(),
  expiresAt: z.iso.datetime(),
  sizeBytes: z.number().int(),
  sha256: z.string(),
  contents: z.array(z.string()),
});

export type ExecutionSummary = z.infer<typeof executionSummaryOutput>;
export type ExecutionDetail = z.infer<typeof executionDetailOutput>;
export type ExecuteKitInput = z.infer<typeof executeKitInput>;

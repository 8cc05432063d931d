/**
 * Public surface of the kit runtime. Everything else in this folder is an implementation detail.
 *
 *   const loaded = loadKitPackage({ manifest, files });          // check a kit version once
 *   const runtime = createKitRuntime({ limits: { timeoutMs: 5000 } });
 *   const result = await runtime.execute(loaded.kit, { tenantId, input });
 *   const bundle = await buildOutputBundle(result.outputs, { kitRef: result.kitRef });
 */
export {
  KIT_PHASES,
  KIT_TYPES,
  OUTPUT_TYPES,
  kitManifestSchema,
  kitManifestJsonSchema,
  MAX_CREDENTIAL_ID_LENGTH,
  RESERVED_KIT_IDS,
  kitIdSchema,
  kitVersionSchema,
  parseKitManifest,
  type KitManifest,
  type KitOutputDeclaration,
  type KitComponentDeclaration,
  type KitPhase,
  type OutputType,
  type ManifestParseResult,
} from './manifest.schema.ts';
export { hasVisibleCharacter, NO_VISIBLE_CHARACTER } from './visible-text.ts';
export {
  loadKitPackage,
  BUNDLE_MANIFEST_NAME,
  MANIFEST_FILE,
  MAX_KIT_FILE_BYTES,
  type KitFiles,
  type KitPackage,
  type KitPackageProblem,
  type LoadKitPackageResult,
} from './kit-package.ts';
export { createKitRuntime, type KitRuntime, type KitRuntimeOptions } from './kit-runtime.ts';
export { DEFAULT_KIT_LIMITS, KIT_TEMPLATE_LIMITS, type KitLimits } from './limits.ts';
export { countTemplateExpressions } from './template-depth.ts';
export type {
  KitExecutionRequest,
  KitExecutionResult,
  KitExecutionStatus,
  KitExecutionError,
  KitPhaseRecord,
} from './execute-kit.ts';
export { MAX_INPUT_DEPTH, RUN_CANCELLED_MESSAGE } from './execute-kit.ts';
export type { KitRunStep } from './execution-result.ts';
export { MAX_COMPOSITION_DEPTH, type KitResolver, type KitComponentRecord } from './compose-components.ts';
export { MAX_RENDERED_OUTPUTS } from './render-outputs.ts';
export {
  createGitCapabilities,
  isPublicHttpsRemote,
  isWithinRepository,
  type GitCapabilitiesOptions,
  type GitCredentialOpener,
  type GitCommitArgument,
  type GitCommitResult,
  type GitVerifyArgument,
  type GitVerifyResult,
  type GitFile,
} from './capabilities/git-commit.ts';
export type { KitOutputRecord } from './render-outputs.ts';
export type { KitOutputStatus } from './validate-outputs.ts';
export type { HostCapability, KitLogEntry, KitLogLevel } from './sandbox/host-bridge.ts';
export type { IsolatePoolOptions, IsolatePoolStats } from './sandbox/isolate-pool.ts';
export { buildOutputBundle, BundleError, type BundleOutput, type BundleEntry, type OutputBundle, type BundleInfo } from './bundle.ts';
export {
  createCredentialSealer,
  createPublicCredentialSealer,
  generateCredentialKeyPair,
  CredentialSealError,
  CREDENTIAL_SECRET_BOUND,
  holdsAValue,
  MAX_CLIENT_SEALED_CIPHERTEXT_LENGTH,
  type CredentialSealer,
  type PublicCredentialSealer,
  type CredentialKeyRing,
  type CredentialKeyPair,
  type CredentialBinding,
  type CredentialSecret,
  type SealedCredential,
} from './sealed-credentials.ts';
export { safeKitPath, explainUnsafePath, UnsafePathError } from './safe-path.ts';
export { KitLimitError, KitHookError, KitPhaseError, HostCapabilityError, type KitLimitKind } from './errors.ts';
export { nestsDeeperThan } from './json-depth.ts';
export { createThreadPool, type ThreadPoolOptions } from './thread-pool.ts';

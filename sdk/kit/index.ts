/**
 * The kit author's SDK: manifest types and JSON Schema, hook context types, and helpers to load,
 * run, test and publish a kit directory exactly as the server would. Kits import only this (and
 * `sdk/`); it uses the kit runtime but no server code.
 *
 *   const result = await runKitForTest(kitDir, example);      // same sandbox and limits as the server
 *   expect(result.output('openapi').status).toBe('valid');
 */
export * from './types.ts';
export { kitManifestJsonSchema, parseKitManifest, KIT_PHASES, KIT_TYPES, OUTPUT_TYPES, DEFAULT_KIT_LIMITS, MANIFEST_FILE } from '../../kit-runtime/index.ts';
export {
  loadKitDirectory,
  loadKitDirectoryOrThrow,
  readKitExamples,
  referencedFiles,
  formatProblem,
  KitLoadError,
  type LoadedKitDirectory,
  type KitExample,
} from './kit-directory.ts';
export { runKitForTest, runLoadedKit, testRuntime, closeTestRuntime, directoryKitResolver, type RunKitForTestOptions, type KitTestResult } from './run-kit.ts';
export { testKitDirectory, formatTestReport, type KitTestReport, type KitExampleRun } from './test-kit.ts';
export { publishKit, buildPublishBody, PublishError, type PublishOptions, type PublishProgress, type PublishedKit, type PublishOutcome } from './publish.ts';
export { scaffoldKit, scaffoldFiles, kitIdFromDirectory, ScaffoldError } from './scaffold.ts';
/** For platform kits that publish to git, and their tests: the capability the server lends, and a loopback git server. */
export { createGitCapabilities, type GitCapabilitiesOptions, type GitCommitResult, type GitVerifyResult } from '../../kit-runtime/index.ts';
export { startTestGitServer, type TestGitServer } from '../../kit-runtime/test-support/git-http-server.ts';

import { createThreadPool, type KitManifest, type KitPackageProblem } from '../../../kit-runtime/index.ts';
import { AppError } from '../../errors/app-error.ts';

export type KitPackageCheckRequest = { manifest: unknown; files: Record<string, string> };
export type KitPackageCheck = { ok: true; manifest: KitManifest } | { ok: false; problems: KitPackageProblem[] } | { ok: false; failure: string };

export interface KitPackageCheckerOptions {
  /** Threads checks run on, side by side. */
  threads: number;
  /** Checks that may wait for a thread; one more is refused at once (SERVICE_UNAVAILABLE). */
  maxWaiting: number;
  /** A check this long means something is wrong with its thread, not with the kit: the thread is replaced. */
  timeoutMs: number;
  /** The thread's module (tests start a stand-in). */
  workerUrl: URL;
}

const defaults: KitPackageCheckerOptions = {
  threads: 2,
  maxWaiting: 8,
  timeoutMs: 60_000,
  workerUrl: new URL('./kit-package-check.worker.ts', import.meta.url),
};

const busy = (message: string) => new AppError('SERVICE_UNAVAILABLE', `${message}; try again shortly`);

/**
 * Checks kit packages on threads of their own (kit-runtime's thread pool). Parsing a kit's
 * templates and compiling its output schemas takes up to about a second for the largest kit the
 * limits allow; on the API's thread that second would hold every other request of every tenant.
 * Waiting checks are bounded: past them a publish is refused at once. A check that overruns its
 * time is answered SERVICE_UNAVAILABLE and its thread replaced; no other check is lost with it.
 */
export function createKitPackageChecker(options: Partial<KitPackageCheckerOptions> = {}) {
  const { threads, maxWaiting, timeoutMs, workerUrl } = { ...defaults, ...options };
  const pool = createThreadPool<KitPackageCheckRequest, KitPackageCheck>({
    workerUrl,
    threads,
    timeoutMs,
    overran: () => busy(`checking the kit package took longer than ${timeoutMs / 1000} s`),
    waiting: { max: maxWaiting, busy: () => busy('too many kit packages are being checked') },
  });
  return {
    check: (manifest: unknown, files: Record<string, string>): Promise<KitPackageCheck> => pool.run({ manifest, files }),
  };
}

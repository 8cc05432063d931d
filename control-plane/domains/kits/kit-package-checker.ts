import { Worker } from 'node:worker_threads';
import type { KitManifest, KitPackageProblem } from '../../../kit-runtime/index.ts';

export type KitPackageCheckRequest = { id: number; manifest: unknown; files: Record<string, string> };
export type KitPackageCheck = { ok: true; manifest: KitManifest } | { ok: false; problems: KitPackageProblem[] } | { ok: false; failure: string };

/** A check this long means something is wrong with the thread, not with the kit: it is replaced. */
const CHECK_TIMEOUT_MS = 60_000;

/**
 * Checks kit packages on a thread of their own. Parsing a kit's templates and compiling its output
 * schemas takes up to about a second for the largest kit the limits allow; on the API's thread
 * that second would hold every other request of every tenant. One thread, started on first use
 * and unref'd (it never keeps the process alive); checks queue on it in order.
 */
export function createKitPackageChecker() {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, { resolve: (check: KitPackageCheck) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();

  const failAll = (error: Error) => {
    for (const [id, waiting] of pending) {
      clearTimeout(waiting.timer);
      waiting.reject(error);
      pending.delete(id);
    }
    worker = undefined;
  };

  const thread = (): Worker => {
    if (worker) return worker;
    const started = new Worker(new URL('./kit-package-check.worker.ts', import.meta.url));
    started.unref();
    started.on('message', ({ id, answer }: { id: number; answer: KitPackageCheck }) => {
      const waiting = pending.get(id);
      if (!waiting) return;
      clearTimeout(waiting.timer);
      pending.delete(id);
      waiting.resolve(answer);
    });
    started.on('error', (error) => failAll(new Error(`the kit package check failed: ${error.message}`)));
    started.on('exit', () => {
      if (worker === started) failAll(new Error('the kit package check stopped unexpectedly'));
    });
    return (worker = started);
  };

  return {
    check(manifest: unknown, files: Record<string, string>): Promise<KitPackageCheck> {
      const id = nextId++;
      const target = thread();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          // The thread is stuck: replace it; the other checks queued on it fail with this one.
          worker = undefined;
          void target.terminate();
          failAll(new Error(`the kit package check took longer than ${CHECK_TIMEOUT_MS} ms`));
        }, CHECK_TIMEOUT_MS);
        timer.unref();
        pending.set(id, { resolve, reject, timer });
        target.postMessage({ id, manifest, files } satisfies KitPackageCheckRequest);
      });
    },
  };
}

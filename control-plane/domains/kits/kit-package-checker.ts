import { Worker } from 'node:worker_threads';
import type { KitManifest, KitPackageProblem } from '../../../kit-runtime/index.ts';
import { AppError } from '../../errors/app-error.ts';

export type KitPackageCheckRequest = { id: number; manifest: unknown; files: Record<string, string> };
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

type Check = {
  request: KitPackageCheckRequest;
  resolve: (check: KitPackageCheck) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
};
type Thread = { worker: Worker; running?: Check };

const busy = (message: string) => new AppError('SERVICE_UNAVAILABLE', `${message}; try again shortly`);

/**
 * Checks kit packages on threads of their own. Parsing a kit's templates and compiling its output
 * schemas takes up to about a second for the largest kit the limits allow; on the API's thread
 * that second would hold every other request of every tenant.
 *
 * A few threads, started on first use and unref'd (they never keep the process alive), each check
 * one package at a time; other checks wait in one queue, in order. A publish waits inside its
 * request transaction, so the queue is bounded: past it, a publish is refused at once rather than
 * hold a database connection. A check that overruns its time is answered SERVICE_UNAVAILABLE and
 * its thread replaced; no other check is lost with it.
 */
export function createKitPackageChecker(options: Partial<KitPackageCheckerOptions> = {}) {
  const { threads: size, maxWaiting, timeoutMs, workerUrl } = { ...defaults, ...options };
  const threads: Thread[] = [];
  const waiting: Check[] = [];
  let nextId = 1;

  const finish = (thread: Thread, settle: (check: Check) => void) => {
    const check = thread.running;
    if (!check) return;
    clearTimeout(check.timer);
    thread.running = undefined;
    settle(check);
    dispatch();
  };

  const retire = (thread: Thread) => {
    threads.splice(threads.indexOf(thread), 1);
    void thread.worker.terminate();
  };

  const start = (): Thread => {
    const thread: Thread = { worker: new Worker(workerUrl) };
    thread.worker.unref();
    thread.worker.on('message', ({ id, answer }: { id: number; answer: KitPackageCheck }) => {
      if (thread.running?.request.id === id) finish(thread, (check) => check.resolve(answer));
    });
    // A thread that dies takes only the check it was running with it.
    const died = (reason: string) => {
      if (!threads.includes(thread)) return;
      retire(thread);
      finish(thread, (check) => check.reject(new Error(`the kit package check ${reason}`)));
      dispatch();
    };
    thread.worker.on('error', (error) => died(`failed: ${error.message}`));
    thread.worker.on('exit', () => died('stopped unexpectedly'));
    threads.push(thread);
    return thread;
  };

  function dispatch(): void {
    while (waiting.length > 0) {
      const thread = threads.find((candidate) => !candidate.running) ?? (threads.length < size ? start() : undefined);
      if (!thread) return;
      const check = waiting.shift()!;
      thread.running = check;
      check.timer = setTimeout(() => {
        retire(thread);
        finish(thread, (stuck) => stuck.reject(busy(`checking the kit package took longer than ${timeoutMs / 1000} s`)));
      }, timeoutMs);
      check.timer.unref();
      thread.worker.postMessage(check.request);
    }
  }

  return {
    check(manifest: unknown, files: Record<string, string>): Promise<KitPackageCheck> {
      if (waiting.length >= maxWaiting) return Promise.reject(busy('too many kit packages are being checked'));
      return new Promise((resolve, reject) => {
        waiting.push({ request: { id: nextId++, manifest, files }, resolve, reject });
        dispatch();
      });
    },
  };
}

// A stand-in for kit-package-check.worker.ts in tests of the checker's queueing: it answers each
// package at once, unless its manifest asks it to hang (`{hang: true}`), which holds the thread.
import { parentPort } from 'node:worker_threads';

parentPort!.on('message', ({ id, request: { manifest } }: { id: number; request: { manifest: { hang?: boolean; name: string } } }) => {
  if (manifest.hang) for (;;);
  parentPort!.postMessage({ id, answer: { ok: true, manifest } });
});

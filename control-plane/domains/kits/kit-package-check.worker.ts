// The thread kit-package-checker.ts starts: checks kit packages as the runtime will load them, off
// the API's thread. Each message is one package; each answer carries the id it came with.
import { parentPort } from 'node:worker_threads';
import { loadKitPackage } from '../../../kit-runtime/index.ts';
import type { KitPackageCheck, KitPackageCheckRequest } from './kit-package-checker.ts';

parentPort!.on('message', ({ id, request: { manifest, files } }: { id: number; request: KitPackageCheckRequest }) => {
  let answer: KitPackageCheck;
  try {
    const loaded = loadKitPackage({ manifest, files });
    answer = loaded.ok ? { ok: true, manifest: loaded.kit.manifest } : { ok: false, problems: loaded.problems };
  } catch (error) {
    answer = { ok: false, failure: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage({ id, answer });
});

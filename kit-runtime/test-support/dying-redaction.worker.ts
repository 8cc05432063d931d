// Started by secret-redaction.test.ts in place of secret-redaction.worker.ts: a redaction thread
// that dies on its first task with an error quoting the text it was given, as a RegExp error
// quotes its pattern.
import { parentPort } from 'node:worker_threads';
import type { RedactionRequest } from '../secret-redaction.ts';

parentPort!.on('message', ({ request }: { request: RedactionRequest }) => {
  throw new Error(`could not redact ${JSON.stringify(request)}`);
});

// The thread secret-redaction.ts starts: redacts one text or JSON value per message against the
// secrets that come with it (each recent run's redactor kept, see createRedactionPerformer). Each answer carries the id it came with. A failure is answered without
// the error's message, which may quote the text or a secret (a RegExp error quotes its pattern).
import { parentPort } from 'node:worker_threads';
import { createRedactionPerformer, type RedactionAnswer, type RedactionRequest } from './secret-redaction.ts';

const performRedaction = createRedactionPerformer();

parentPort!.on('message', ({ id, request }: { id: number; request: RedactionRequest }) => {
  let answer: RedactionAnswer;
  try {
    answer = { done: performRedaction(request) };
  } catch {
    answer = { failed: true };
  }
  parentPort!.postMessage({ id, answer });
});

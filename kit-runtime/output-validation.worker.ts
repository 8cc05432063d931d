// The thread output-validation.ts starts: validates one run's outputs per message, keeping the
// compiled schemas of the kit versions it has seen. Each answer carries the id it came with.
import { parentPort } from 'node:worker_threads';
import { OutputValidators, validateOutputsOfRun, type OutputValidationRequest } from './validate-outputs.ts';

const validators = new OutputValidators();

parentPort!.on('message', ({ id, request }: { id: number; request: OutputValidationRequest }) => {
  try {
    parentPort!.postMessage({ id, answer: { verdicts: validateOutputsOfRun(validators, request) } });
  } catch (error) {
    parentPort!.postMessage({ id, answer: { failure: error instanceof Error ? error.message : String(error) } });
  }
});

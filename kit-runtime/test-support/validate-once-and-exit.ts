// Run as its own process by thread-pool.test.ts: validates one output on a thread, prints the
// verdict, and does nothing else: the process must then end by itself.
import { createOutputValidation } from '../output-validation.ts';

const validation = createOutputValidation();
const [verdict] = await validation.validate({ fingerprint: 'once', schemas: {}, outputs: [{ declaration: { outputType: 'yaml' }, content: 'a: 1\n' }] });
console.log(verdict?.status);

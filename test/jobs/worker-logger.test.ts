import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { workerLogger } from '../../control-plane/jobs/worker-logger.ts';
import { createLogger } from '../../control-plane/logger.ts';

/** The JSON lines graphile-worker's messages become on the service's logger. */
function capture() {
  const lines: Array<Record<string, any>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: workerLogger(createLogger('debug', destination)) };
}

describe("graphile-worker's log lines", () => {
  it('keep the message of the error they report, which pino would write as {}', () => {
    const { lines, logger } = capture();
    logger.error('Worker exited with error', { error: new Error('the job table is corrupt') });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, component: 'worker', msg: 'Worker exited with error', err: { message: 'the job table is corrupt' } });
    expect(lines[0]).not.toHaveProperty('error');
  });

  it('report a database that is away (a restart, a failover) as a warning, not a fault', () => {
    const { lines, logger } = capture();
    const restarted = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    logger.error('Error with notify listener', { error: restarted });
    logger.error('Error occurred attempting to UNLISTEN', { error: refused });
    expect(lines.map((line) => [line.level, line.err?.message])).toEqual([
      [40, 'terminating connection due to administrator command'],
      [40, 'connect ECONNREFUSED 127.0.0.1:5432'],
    ]);
  });
});

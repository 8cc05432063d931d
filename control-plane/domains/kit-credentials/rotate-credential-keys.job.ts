import { z } from 'zod';
import { defineJob } from '../../jobs/job-definition.ts';

/** Key rotation runs in a worker: only workers may open (and so re-seal) credentials. */
export const rotateCredentialKeysJob = defineJob({
  name: 'credentials.rotate_keys',
  payload: z.object({ requestedBy: z.uuid() }),
  async run({ requestedBy }, deps) {
    const { organizations, resealed, invalidated } = await deps.credentials.rotate();
    deps.log.info({ organizations, resealed, invalidated, requestedBy }, 'credential keys rotated');
  },
});

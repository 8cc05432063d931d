/**
 * How long health waits on the database, for its own check and for the request's authentication and
 * rate count before it. One that stopped answering (paused, a network path that drops packets, a
 * pool whose connections all hang) would otherwise hold the probe with it, and a load balancer's
 * probe would time out instead of being told the database is down.
 */
export const HEALTH_DATABASE_WAIT_MS = 2_000;

export class HealthWaitOutlasted extends Error {
  override name = 'HealthWaitOutlasted';
}

/** `work`, or HealthWaitOutlasted once `waitMs` have passed without it settling. */
export async function withinHealthWait<T>(work: Promise<T>, waitMs = HEALTH_DATABASE_WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const outlasted = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new HealthWaitOutlasted()), waitMs);
  });
  try {
    return await Promise.race([work, outlasted]);
  } finally {
    clearTimeout(timer);
  }
}

import { setTimeout as sleep } from 'node:timers/promises';

/** Polls `check` every 50 ms until it answers true; fails naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(50);
  }
}

/**
 * Waits the runtime bounds: by a signal (a call whose phase or run is over) or by a time (what a
 * run or a shutdown still waits for).
 */

/**
 * `work`'s answer while `signal` has not aborted; once it has, `stopped()` at once, and also when
 * the work answers after (even successfully): nothing waits for it any more, and work that ignores
 * the signal must not look as if it had finished.
 */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal, stopped: () => unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(stopped());
    // The work may have been what aborted it (a cancelled run, a closed runtime).
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work
      .then(
        (value) => (signal.aborted ? reject(stopped()) : resolve(value)),
        (error: unknown) => reject(signal.aborted ? stopped() : error),
      )
      .finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Waits until `pending` is empty, `waitMs` at most; true when it emptied. Its promises remove
 * themselves as they settle and never reject; any added meanwhile are waited for too.
 */
export async function settledWithin(pending: ReadonlySet<Promise<unknown>>, waitMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(0, waitMs))));
  try {
    while (pending.size > 0) {
      if ((await Promise.race([Promise.all(pending), expired])) === 'expired') return false;
    }
    return true;
  } finally {
    clearTimeout(timer);
  }
}

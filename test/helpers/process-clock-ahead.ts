import { vi } from 'vitest';

/** How far ahead the process's clock is put: far beyond any real skew, so a stamp taken from it stands out. */
export const PROCESS_CLOCK_LEAD_MS = 3_600_000;

/**
 * Runs `work` with this process's clock an hour ahead of the database's: the skewed API node or
 * worker. The service under test runs in this process (startTestApp), so its `new Date()` and
 * `Date.now()` read the shifted time; only Date is faked, and it keeps advancing, so the app's
 * timers, `performance.now()` and PostgreSQL keep real time.
 */
export async function withProcessClockAnHourAhead<T>(work: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  try {
    vi.setSystemTime(Date.now() + PROCESS_CLOCK_LEAD_MS);
    return await work();
  } finally {
    vi.useRealTimers();
  }
}

/** Milliseconds from the ISO time `from` to `to`, as an answer shows them. */
export const millisecondsBetween = (from: string, to: string) => Date.parse(to) - Date.parse(from);

/**
 * Runs `action` if this process exits (`process.exit`, a fatal error) before it is cancelled:
 * synchronously, since nothing asynchronous runs once the process exits. A child process outlives
 * a parent that exits without waiting (a second signal, a shutdown past its limit): the embedded
 * PostgreSQL and an initdb still running are told to stop this way.
 */
export function onProcessExit(action: () => void): { cancel(): void } {
  process.once('exit', action);
  return { cancel: () => void process.off('exit', action) };
}

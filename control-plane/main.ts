import { ConfigError, loadConfig } from './config.ts';
import { ShutdownTimeoutError, startService, type RunningService, type ServiceMode } from './service.ts';

const modes: ServiceMode[] = ['all', 'api', 'worker'];
const REPEAT_WINDOW_MS = 1000;

async function main(): Promise<void> {
  const mode = (process.argv[2] ?? 'all') as ServiceMode;
  if (!modes.includes(mode)) {
    process.stderr.write(`Usage: node control-plane/main.ts [${modes.join('|')}]\n`);
    process.exit(2);
  }

  // Handlers go in before anything starts, so a signal during boot still shuts down cleanly.
  let service: RunningService | undefined;
  let stopSignal: string | undefined;
  let stopExitCode = 0;
  let firstSignalAt = 0;
  const shutdown = (signal: string, exitCode = 0) => {
    if (stopSignal) {
      // Ctrl-C under `npm start` arrives twice at once (from the terminal and forwarded by npm): one stop.
      if (Date.now() - firstSignalAt < REPEAT_WINDOW_MS) return;
      // A second signal later: the operator will not wait (for a boot stuck on the lock, for long jobs).
      process.stderr.write(`${signal} again: exiting without waiting for running work\n`);
      process.exit(1);
    }
    stopSignal = signal;
    stopExitCode = exitCode;
    firstSignalAt = Date.now();
    if (!service) return; // boot finishes first, then stops
    service.log.info({ signal }, 'shutting down: no new requests or jobs; finishing running ones');
    service.stop().then(
      () => process.exit(stopExitCode),
      (error) => {
        if (error instanceof ShutdownTimeoutError) service?.log.error(error.message);
        else service?.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  const onFatal = (reason: string) => {
    if (stopSignal) {
      // Already stopping: let that shutdown finish (a second request would end it at once), and exit 1.
      service?.log.error(`${reason}; already shutting down`);
      stopExitCode = 1;
      return;
    }
    service?.log.error(`${reason}; shutting down`);
    shutdown('fatal', 1);
  };
  // A failed promise nobody waits on (a library's unawaited call, say) would end the process on
  // the spot, requests in flight and all: it is logged, and the service shuts down in order.
  process.on('unhandledRejection', (error) => {
    if (!service) process.stderr.write(`Specwright: a failure nothing handled, during start: ${error instanceof Error ? error.message : String(error)}\n`);
    service?.log.error({ err: error }, 'a failure nothing handled');
    onFatal('a failure nothing handled');
  });
  service = await startService(loadConfig(), { mode, announce: true, onFatal });
  if (stopSignal) {
    const signal = stopSignal;
    stopSignal = undefined;
    shutdown(signal, stopExitCode);
  }
}

main().catch((error) => {
  const message = error instanceof ConfigError ? error.message : `Specwright failed to start: ${error instanceof Error ? error.message : String(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});

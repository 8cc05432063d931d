import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', '.specwright/**'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup/no-hashes-in-responses.ts'],
    pool: 'forks',
    // A file per core, two at least: the files mostly wait on PostgreSQL, child processes and
    // timers, so vitest's default (one core left idle: a single file at a time on two cores) kept
    // the machine half idle. On two cores the whole suite went from about 11 minutes to under 7.
    maxWorkers: Math.max(2, availableParallelism()),
    // isolated-vm needs the snapshot off on Node 20+.
    execArgv: ['--no-node-snapshot'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});

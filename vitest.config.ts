import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['node_modules/**', '.specwright/**'],
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup/no-hashes-in-responses.ts'],
    pool: 'forks',
    // isolated-vm needs the snapshot off on Node 20+.
    execArgv: ['--no-node-snapshot'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
  },
});

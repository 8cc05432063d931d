// Runs the kit-runtime tests alone, without the repository's database global setup:
//   npx vitest run kit-runtime --config kit-runtime/vitest.config.ts
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['kit-runtime/**/*.test.ts'],
    pool: 'forks',
    // isolated-vm needs the snapshot off on Node 20+.
    execArgv: ['--no-node-snapshot'],
    testTimeout: 30_000,
  },
});

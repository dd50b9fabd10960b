import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // TLS servers and child processes: keep to the 2 cores CI has.
    maxWorkers: 2,
    setupFiles: ['test/setup/no-proxy.ts'],
    reporters: ['default'],
  },
});

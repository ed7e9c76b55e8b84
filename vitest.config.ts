import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS entry for Yoga and Pothos; Vite would pick the .mjs one for our
    // files, and two graphql instances refuse each other's schema. One entry for everyone.
    alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // One database server for the whole run; each test file gets a database of its own.
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});

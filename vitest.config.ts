import { defineConfig } from 'vitest/config';

/**
 * Tests that touch no database: they give the same answer on both passes, so CI's PostgreSQL
 * pass (DATABASE_URL=postgres://…) skips them and stays well inside its time budget.
 */
const STORAGE_FREE = [
  'test/config.test.ts',
  'test/modules/invoices/checksums.test.ts',
  'test/modules/invoices/totals.test.ts',
  'test/modules/invoices/envelope.test.ts',
  'test/modules/invoices/validation.test.ts',
  'test/modules/invoices/prohibited.test.ts',
  'test/modules/rendering/**',
  'test/modules/notifications/email-message.test.ts',
  'test/modules/sharing/pages.test.ts',
  'test/modules/sharing/pages-escaping.test.ts',
  'test/modules/sharing/pages-browser.test.ts',
  'test/modules/sharing/edit-form.test.ts',
  'test/http/url-redaction.test.ts',
];

const onPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules/**', ...(onPostgres ? STORAGE_FREE : [])],
    // Each file gets its own database. Two workers on the two cores: many tests wait on
    // sockets, child processes and timers, so the overlap pays off.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

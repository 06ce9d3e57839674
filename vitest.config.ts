import { defineConfig } from 'vitest/config';

/**
 * Run on the SQLite pass only. Most touch no database, so both passes would give the same
 * answer; the browser test drives pages whose storage paths links-walk and portal-edit cover
 * on PostgreSQL too. Skipping them keeps CI's PostgreSQL pass well inside its time budget.
 */
const SQLITE_PASS_ONLY = [
  'test/architecture/**',
  'test/modules/sharing/browser.test.ts',
  'test/config.test.ts',
  'test/config-refusals.test.ts',
  'test/modules/invoices/checksums.test.ts',
  'test/modules/invoices/totals.test.ts',
  'test/modules/invoices/envelope.test.ts',
  'test/modules/invoices/validation.test.ts',
  'test/modules/invoices/validation-properties.test.ts',
  'test/modules/invoices/prohibited.test.ts',
  'test/modules/rendering/**',
  'test/modules/invoices/amount-in-words.test.ts',
  'test/modules/invoices/qr-payload.test.ts',
  'test/modules/invoices/print-model.test.ts',
  'test/modules/notifications/email-message.test.ts',
  'test/modules/sharing/pages.test.ts',
  'test/modules/sharing/pages-escaping.test.ts',
  'test/modules/sharing/pages-browser.test.ts',
  'test/modules/sharing/edit-form.test.ts',
  'test/http/url-redaction.test.ts',
  'test/modules/edo/http-operator.test.ts',
  // Pure rules: no database.
  'test/modules/payments/**',
  'test/modules/reminders/**',
  'test/modules/recurring/**',
  'test/modules/invoices/rules/**',
  'test/shared/**',
  'test/ops/alerts-dashboard.test.ts',
];

const onPostgres = /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL ?? '');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['node_modules/**', ...(onPostgres ? SQLITE_PASS_ONLY : [])],
    // Each file gets its own database. Two workers on the two cores: many tests wait on
    // sockets, child processes and timers, so the overlap pays off.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});

/**
 * A worker in its own process, as `invoicing worker` runs it: configured from DATABASE_URL,
 * SMTP_URL and INVOICING_MAIL_FROM, plus NOTIFY_TEST_POLICY (JSON) for short test timings.
 * Prints `ready` once polling; stops cleanly on SIGTERM (the tests also SIGKILL it).
 */
import { loadConfig } from '../../../src/config/config.js';
import { openDatabase } from '../../../src/db/database.js';
import { createNotifications } from '../../../src/modules/notifications/index.js';
import { createStores } from '../../../src/stores.js';
import { systemClock } from '../../../src/shared/clock.js';
import { documentStatusPort } from '../../../src/modules/invoices/index.js';

const config = loadConfig(process.env);
const database = openDatabase(config.database);
const policy = JSON.parse(process.env.NOTIFY_TEST_POLICY ?? '{}') as Record<string, number>;
const notifier = createNotifications({
  database,
  stores: createStores(database).notifications,
  clock: systemClock,
  bases: {
    publicUrl: 'https://inv.example',
    shareUrl: 'https://share.example/s',
    portalUrl: 'https://inv.example/portal',
    secret: 'test-secret-0123456789abcdef0123456789abcdef',
  },
  config,
  documents: documentStatusPort,
  policy,
  smtpTimeouts: { connectionTimeoutMs: 4_000, greetingTimeoutMs: 4_000, socketTimeoutMs: 4_000 },
});
notifier.worker.start();
process.stdout.write('ready\n');

process.once('SIGTERM', () => {
  void notifier
    .close()
    .then(() => database.close())
    .then(() => process.exit(0));
});

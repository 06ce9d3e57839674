/**
 * Table types for Kysely. Portable choices: timestamps are ISO-8601 UTC text, calendar
 * dates are `YYYY-MM-DD` text, flags are integers 0/1, money is decimal text. Tenant tables
 * lead their keys with `team_id`. Each owner declares its tables in src/db/tables/*.ts (a table
 * has one writer, its module); they are composed here into the one `Database` type.
 */
import type { Generated, Insertable, Updateable } from 'kysely';
import type { EdoTables } from './tables/edo.js';
import type { EventsTables, WebhooksTables } from './tables/events-webhooks.js';
import type { InvoicesTables } from './tables/invoices.js';
import type { NotificationsTables } from './tables/notifications.js';
import type { OutboxTables } from './tables/outbox.js';
import type { TeamsTables } from './tables/teams.js';

export type * from './tables/edo.js';
export type * from './tables/events-webhooks.js';
export type * from './tables/invoices.js';
export type * from './tables/notifications.js';
export type * from './tables/outbox.js';
export type * from './tables/teams.js';
export type { Generated, Insertable, Updateable };

export interface Database extends TeamsTables, InvoicesTables, OutboxTables, NotificationsTables, EdoTables, EventsTables, WebhooksTables {}

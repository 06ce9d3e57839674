/**
 * The wire shape of a notification outcome: the `notifications` object of create and update
 * responses (spec 2.4) and `metadata.notifications`. Defined here, beside the code that
 * produces it; the documents' schemas use these definitions.
 */
import { Type, type Static } from '@sinclair/typebox';

const S = (description: string) => Type.String({ description });

export const NotificationFailure = Type.Object(
  {
    email: S('Address that was not delivered to.'),
    error: S(
      'Reason: `invalid_address`; the gate that blocked it (`demo_mode`, `tariff_external_share_disabled`, ' +
        '`emails_per_day_exceeded`); or the SMTP server’s reply / the transport error of the last attempt.',
    ),
    code: Type.Optional(
      S(
        'Machine-readable reason: `invalid_address`, `blocked`, `smtp_rejected`, `smtp_timeout`, `smtp_connection`, ' +
          '`smtp_tls`, `smtp_auth`, `smtp_error`, `file_error`, `in_progress`.',
      ),
    ),
    state: Type.Optional(
      S(
        '`retrying` (queued for another attempt), `sending` (an attempt is under way), `failed` (final: no more attempts) ' +
          'or `blocked` (stopped by a gate, never sent).',
      ),
    ),
    attempts: Type.Optional(Type.Integer({ description: 'Delivery attempts made so far.' })),
    next_attempt_at: Type.Optional(Type.String({ description: 'When `retrying`: the time of the next attempt (UTC).' })),
  },
  { additionalProperties: true },
);
export type NotificationFailure = Static<typeof NotificationFailure>;

export const MailRuntime = Type.Object(
  {
    transport: S('`smtp` (SMTP_URL), `eml_file` (no SMTP_URL: written to the outbox directory, counts as sent) or `none`.'),
    duration_ms: Type.Integer({ description: 'Time spent on the delivery attempt this outcome reports.' }),
    retry_queue: Type.Integer({ description: 'E-mails of this outcome waiting in the retry queue.' }),
    attempt_timeout_ms: Type.Optional(Type.Integer({ description: 'Upper bound of one delivery attempt.' })),
    max_attempts: Type.Optional(Type.Integer({ description: 'Attempts made before a delivery is given up.' })),
  },
  { additionalProperties: true, description: 'How mail was handled: transport, duration, retry queue.' },
);
export type MailRuntime = Static<typeof MailRuntime>;

export const Notifications = Type.Object(
  {
    document_public_id: S('The document public id (same as `public_id`).'),
    document_kind: S('Kind of the document: `invoice`.'),
    requested: Type.Boolean({ description: 'True when `notify_recipients` or `send_notifications` was true.' }),
    revision: Type.Optional(Type.Integer({ description: 'The document revision these e-mails were sent for.' })),
    planned_count: Type.Integer({ description: 'E-mails planned: one per recipient, malformed addresses included.' }),
    sent_count: Type.Integer({ description: 'E-mails delivered.' }),
    failed_count: Type.Integer({ description: 'E-mails not delivered (failed, blocked or waiting for a retry).' }),
    sent_to: Type.Array(Type.String(), { description: 'Addresses delivered to.' }),
    failed: Type.Array(NotificationFailure, { description: 'Addresses not delivered to, with the reason.' }),
    blocked_by_service_gate: Type.Boolean({ description: 'True when the service stopped the e-mails (tariff, demo mode).' }),
    block_reason: S('Which gate stopped them: `demo_mode`, `tariff_external_share_disabled`, `emails_per_day_exceeded`; empty when none.'),
    mail_runtime: MailRuntime,
    updated_at: Type.Optional(Type.String({ description: 'When this outcome was last updated (UTC); retries update it.' })),
  },
  { additionalProperties: true, description: 'What happened to the e-mail notifications of this write.' },
);
export type Notifications = Static<typeof Notifications>;

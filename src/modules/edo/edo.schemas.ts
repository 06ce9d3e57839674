/**
 * The wire shape of a document's EDO synchronization: `metadata.edo` of every document
 * response. Defined beside the code that produces it; the documents' schemas use it.
 */
import { Type, type Static } from '@sinclair/typebox';

const S = (description: string) => Type.String({ description });
const Time = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });
const Text = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const EDO_STATUSES = ['queued', 'sent', 'delivered', 'accepted', 'rejected', 'failed'] as const;

export const EdoLink = Type.Object(
  {
    document_id: S('The operator’s id of the linked document.'),
    kind: S('Kind of the linked document, e.g. `receipt_notice` (Извещение о получении), `rejection_notice` (Уведомление об уточнении), `act`, `upd`.'),
    title: S('Title of the linked document as the operator gives it.'),
    number: Text('Its number, when it has one.'),
    date: Text('Its date (YYYY-MM-DD), when it has one.'),
    linked_at: S('When the operator reported the link (its event’s time, UTC): links are listed in this order.'),
    received_at: S('When the link came in through the operator’s change feed (UTC).'),
  },
  { additionalProperties: true, description: 'A document that refers to this one (incoming link), e.g. the buyer’s receipt notice, rejection or act.' },
);
export type EdoLink = Static<typeof EdoLink>;

export const EdoSync = Type.Object(
  {
    status: Type.Union(
      EDO_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          '`queued` (waiting to be sent, or waiting for a retry: see `attempts` and `next_attempt_at`), `sent` (the operator took it), ' +
          '`delivered` (in the buyer’s box; buyer_status becomes `sent`), `accepted` or `rejected` (the buyer’s decision, final), ' +
          '`failed` (final: given up after `max_attempts`, or refused for good, see `last_error_code`).',
      },
    ),
    operator: S('The operator connector: `sandbox` (built in) or `http`.'),
    job_id: S('Id of the send job: the operator’s idempotency key, the same on every retry.'),
    revision: Type.Integer({ description: 'The document revision that was sent.' }),
    seller_edo_id: Text('Sender: the seller organization’s EDO participant id.'),
    buyer_edo_id: S('Recipient: the buyer’s EDO participant id.'),
    operator_document_id: Text('The operator’s id of the sent document, once it took it.'),
    attempts: Type.Integer({ description: 'Send attempts made so far.' }),
    max_attempts: Type.Integer({ description: 'Attempts made before the send is given up as `failed`.' }),
    next_attempt_at: Time('While `queued`: when the next attempt is due (UTC); null otherwise.'),
    last_error: Text('The last send error, as the operator or the connection reported it; null when none.'),
    last_error_code: Text(
      'Machine-readable: `operator_unreachable`, `operator_timeout`, `operator_unavailable`, `operator_auth_failed`, ' +
        '`operator_protocol_error`, `operator_rejected`, `participant_not_found`, `seller_edo_id_missing`, `document_unavailable`.',
    ),
    rejection_reason: Text('When `rejected`: the buyer’s reason.'),
    queued_at: S('When the sync job was written (with the document, UTC).'),
    sent_at: Time('When the operator took the document.'),
    delivered_at: Time('When it reached the buyer’s box.'),
    accepted_at: Time('When the buyer accepted it.'),
    rejected_at: Time('When the buyer rejected it.'),
    failed_at: Time('When the send was given up.'),
    updated_at: S('Last change of this state (UTC).'),
    links: Type.Array(EdoLink, { description: 'Incoming links: documents of the buyer or the operator that refer to this one, oldest first (by `linked_at`).' }),
  },
  {
    additionalProperties: true,
    description:
      'EDO synchronization of the document (see docs/edo.md): the latest revision sent to `buyer_edo_id`, with the operator’s reports and the incoming links.',
  },
);
export type EdoSync = Static<typeof EdoSync>;

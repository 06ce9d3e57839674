/**
 * What notifications and edo receive as their `documents` port (wired by the composition root):
 * the invoices module's writes of delivery news, and the recorded sends and e-mails its creates
 * left in their rows (recorded-sends.ts). The one writer of `invoices` stays this module.
 */
import { lockDocument, markBuyerSent, markRestricted, storeNotificationOutcome, touchDocument } from '../store/portable-status.js';
import { recordedEmails, recordedSends, takeRecordedEmails, takeRecordedSend } from './recorded-sends.js';

export const documentStatusPort = {
  onDelivered: markBuyerSent,
  onChanged: touchDocument,
  lock: lockDocument,
  recordedSends,
  takeRecordedSend,
  recordedEmails,
  takeRecordedEmails,
  storeNotificationOutcome,
  markRestricted,
};

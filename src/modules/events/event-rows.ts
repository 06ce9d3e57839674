/** A document event as its writer gives it (team, type, data, the change's time), and the row it is stored as. */
import type { DocumentEventType, EventData } from './event-types.js';
import type { NewEvent } from './store/index.js';
import { currentTraceparent } from '../../shared/tracing.js';

/** A document event to record: its team, type, data and the change's time. */
export interface DocumentEventInput<T extends DocumentEventType = DocumentEventType> {
  teamId: string;
  type: T;
  data: EventData<T>;
  now: string;
}

/** The row of a document event: its document and revision are columns too (the feed's filters and joins). */
export function newDocumentEvent(event: DocumentEventInput): NewEvent {
  const data = event.data as { public_id: string; revision: number };
  return {
    teamId: event.teamId,
    type: event.type,
    publicId: data.public_id,
    revision: data.revision,
    data: JSON.stringify(event.data),
    createdAt: event.now,
    traceparent: currentTraceparent(),
  };
}

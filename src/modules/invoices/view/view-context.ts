/**
 * What the response builder (invoice-view.ts) needs besides the rows: the link bases, the time,
 * the caller, the request and the write's outcomes. Shared by the read and the write side.
 */
import type { Clock } from '../../../shared/clock.js';
import type { EdoSync } from '../../edo/index.js';
import type { LinkBases } from '../../links/index.js';
import type { AuthContext } from '../../teams/index.js';
import type { InvoiceWriteResponse } from '../invoice.schemas.js';
import type { RequestInfo } from '../model/document-row.js';
import type { ViewContext } from './invoice-view.js';

/** What the response builder needs besides the rows: bases, time, caller, request, outcomes. */
export function viewContextFor(
  bases: LinkBases,
  clock: Clock,
  auth: AuthContext,
  info: RequestInfo,
  notifications: InvoiceWriteResponse['notifications'],
  edo: EdoSync | null,
  demoGuids?: Record<string, string>,
): ViewContext {
  return {
    bases,
    now: clock.now(),
    tariff: auth.tariff,
    caller: { keyId: auth.keyId, keyName: auth.keyName },
    request: info,
    notifications,
    edo,
    ...(demoGuids ? { demo: { guids: demoGuids } } : {}),
  };
}

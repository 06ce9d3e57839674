/**
 * A step that cannot run now for want of capacity (every PDF renderer busy and its queue
 * full): nothing is wrong with the work itself. A request that meets it answers 503 with
 * Retry-After; a background job (an e-mail, an EDO send) is postponed by `retryAfterMs` and the
 * attempt is not counted against its attempts.
 */
export class BusyError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number,
  ) {
    super(message);
    this.name = 'BusyError';
  }
}

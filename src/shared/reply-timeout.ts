/**
 * Timeouts for a reply from a peer (the primary over IPC, Redis over TCP) that measure the peer,
 * not this process. Node's event loop runs expired timers before it reads sockets, so when this
 * process's loop was busy past the deadline, a plain timer fires although the reply came in time
 * and is waiting to be read, and the caller takes its own slowness for the peer's. Here the due
 * timer lets the loop read once more (an immediate runs after the I/O phase) and the call fails
 * only if the reply is still missing then.
 */

/**
 * Runs `expire` about `ms` from now, after the I/O that arrived meanwhile has been handled.
 * `expire` must check that the reply is still missing: clearing the timer after it fired does
 * not cancel the look that follows.
 */
export function setReplyTimeout(expire: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(() => setImmediate(expire), ms);
}

/** `reply`, or a rejection with `timedOut()` if it has not settled within `ms` (as above). */
export function withReplyTimeout<T>(reply: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setReplyTimeout(() => {
      if (settled) return;
      settled = true;
      reject(timedOut());
    }, ms);
    reply.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

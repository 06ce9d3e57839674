/**
 * Admission to the PDF threads in two lanes, each with a queue of its own: `public` (share and
 * portal PDFs, anyone with a link) and `background` (e-mail attachments and EDO sends). A lane
 * whose queue is full refuses at once; the other lane is unaffected. When both have renders
 * waiting, a freed thread goes to each lane in turn, so a flood of public requests delays a
 * background render by at most one public render per thread (besides the renders on the
 * threads and the background ones queued before it), and never refuses it.
 */
import { BusyError } from '../../shared/busy-error.js';

export type RenderLane = 'public' | 'background';

/** How long a refused caller is asked to wait (the share routes' Retry-After, a job's postponement). */
export const RENDER_BUSY_RETRY_MS = 2_000;

/** The lane's render queue is full: the caller answers 503 with Retry-After, a job is postponed. */
export class RenderQueueFullError extends BusyError {
  constructor(readonly lane: RenderLane) {
    super(`every PDF renderer is busy and the ${lane} render queue is full`, RENDER_BUSY_RETRY_MS);
    this.name = 'RenderQueueFullError';
  }
}

export class RenderLanes {
  private running = 0;
  private readonly waiting: Record<RenderLane, Array<() => void>> = { public: [], background: [] };
  /** Whose turn it is when both lanes wait. */
  private turn: RenderLane = 'background';

  constructor(
    private readonly threads: number,
    private readonly queueMax: Record<RenderLane, number>,
  ) {}

  /** Resolves when a thread is the caller's; throws RenderQueueFullError when its lane's queue is full. */
  async acquire(lane: RenderLane): Promise<void> {
    // Renders wait only while every thread is taken.
    if (this.running < this.threads) {
      this.running += 1;
      return;
    }
    const queue = this.waiting[lane];
    if (queue.length >= this.queueMax[lane]) throw new RenderQueueFullError(lane);
    await new Promise<void>((resolve) => queue.push(resolve));
  }

  /** Hands the caller's thread to the next waiting render, or frees it. */
  release(): void {
    const lane = this.next();
    const waiter = lane === null ? undefined : this.waiting[lane].shift();
    if (!waiter) {
      this.running -= 1;
      return;
    }
    this.turn = lane === 'public' ? 'background' : 'public';
    waiter();
  }

  private next(): RenderLane | null {
    const pub = this.waiting.public.length > 0;
    const bg = this.waiting.background.length > 0;
    if (pub && bg) return this.turn;
    return pub ? 'public' : bg ? 'background' : null;
  }
}

import type { AttemptSummary, PlannedProvider } from './definitions';

/** A user's "try again": claimed by the loop, fulfilled when its attempt exists, or refused. */
export interface AttemptRequest {
  provider?: string;
  claimed: boolean;
  created?: AttemptSummary;
  refused?: { type: string; message: string };
}

/** The next attempt to run: its provider, the request it serves, its row if admission wrote it. */
export interface AttemptToRun {
  provider: PlannedProvider;
  request?: AttemptRequest;
  created?: AttemptSummary;
}

/**
 * Users' "try again" requests of one run, in the order they came: the update handler queues
 * each and waits; the attempt loops claim the first unclaimed, then fulfil or refuse it.
 */
export class AttemptRequests {
  private readonly queue: AttemptRequest[] = [];

  /** A request waiting to be claimed by the loop. */
  ask(request: AttemptRequest): void {
    this.queue.push(request);
  }

  /** A request that was served, refused or abandoned leaves the queue. */
  withdraw(request: AttemptRequest): void {
    const at = this.queue.indexOf(request);
    if (at !== -1) this.queue.splice(at, 1);
  }

  /** A request is queued and neither served nor refused yet. */
  waiting(): boolean {
    return this.queue.some((r) => !r.created && !r.refused);
  }

  /** The first request no loop has claimed yet. */
  pending(): AttemptRequest | undefined {
    return this.queue.find((r) => !r.claimed);
  }

  /** The loop serves the request now (with a refusal, when the plan decided against it). */
  claim(request: AttemptRequest, refusal?: { type: string; message: string }): void {
    request.claimed = true;
    if (refusal) this.refuse(request, refusal);
  }

  /** The request's attempt exists: its update answers with it. */
  fulfil(request: AttemptRequest, created: AttemptSummary): void {
    request.created = created;
    this.withdraw(request);
  }

  /** The request cannot be served: its update fails with this typed refusal. */
  refuse(request: AttemptRequest, refusal: { type: string; message: string }): void {
    request.refused = { type: refusal.type, message: refusal.message };
  }
}

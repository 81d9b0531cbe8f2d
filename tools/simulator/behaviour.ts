import type { IncomingMessage, ServerResponse } from 'node:http';
import { Drift, DRIFTING_MODEL } from './drift';
import type { Fault, FaultQueue, SimulatorRoute } from './faults';
import { sendJson, sendUnreadable } from './http';
import { ledgerKey, type Ledger, type LedgerRequest } from './ledger';
import { modelProfile } from './models';
import { providerError, rateLimited } from './protocols';

/**
 * How a simulated provider behaves towards one request: the fault it meets (injected, or its
 * model's profile), the gates and status lookups it may wait for, and then the work, done or
 * replayed through the ledger, and the answer (or the failure, drop or stall instead of it).
 */

/** An answer with extra fields merged in: into a charge's body, or into a model's JSON output. */
export function withMerged(
  route: SimulatorRoute,
  response: unknown,
  merge: Record<string, unknown>,
): unknown {
  if (route === 'charge' || route === 'charge-status')
    return { ...(response as Record<string, unknown>), ...merge };
  if (route === 'chat') {
    const body = structuredClone(response) as {
      choices: Array<{ message: { content: string | null } }>;
    };
    const message = body.choices[0]!.message;
    message.content = JSON.stringify({
      ...(JSON.parse(message.content ?? '{}') as object),
      ...merge,
    });
    return body;
  }
  const body = structuredClone(response) as {
    content: Array<{ type: string; input?: Record<string, unknown> }>;
  };
  const call = body.content.find((block) => block.type === 'tool_use');
  if (call) call.input = { ...call.input, ...merge };
  return body;
}

export class Behaviour {
  /** Answers that will never come (until the server shuts down). */
  private readonly hanging = new Set<ServerResponse>();
  /** Gates the tests open; requests held at a closed gate wait for it. */
  private readonly openGates = new Set<string>();
  private readonly heldAtGate = new Map<string, Array<() => void>>();
  /** Requests waiting for a status lookup of their key before they do the work. */
  private readonly awaitingStatusLookup = new Map<string, Array<() => void>>();

  constructor(
    private readonly ledger: Ledger,
    private readonly faults: FaultQueue,
    /** The drifting model's settings and its count of answers (drift.ts). */
    readonly drift: Drift = new Drift(),
  ) {}

  /** Let every request held at this gate go on, and any that comes later. */
  openGate(gate: string): void {
    this.openGates.add(gate);
    for (const resume of this.heldAtGate.get(gate) ?? []) resume();
    this.heldAtGate.delete(gate);
  }

  /** A status lookup of this key was answered: requests that waited for one may go on. */
  statusLookedUp(slot: string): void {
    const waiting = this.awaitingStatusLookup.get(slot);
    this.awaitingStatusLookup.delete(slot);
    for (const resume of waiting ?? []) resume();
  }

  /** Note a request refused before any work (malformed, or a parameter the model refuses). */
  refused(route: SimulatorRoute, request: LedgerRequest, status: number): void {
    this.ledger.record({
      route,
      idempotencyKey: request.idempotencyKey,
      model: request.model,
      at: new Date().toISOString(),
      refusedWith: status,
      ...(request.body === undefined ? {} : { body: request.body }),
    });
  }

  /** The answer with `bytes` of padding, written as the reader takes it (chunked). */
  private async sendOversized(
    res: ServerResponse,
    status: number,
    response: unknown,
    headers: Record<string, string>,
    bytes: number,
    endless = false,
  ): Promise<void> {
    if (res.destroyed) return;
    const payload = JSON.stringify(response);
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    // Stop writing once the reader has hung up (a capped client cancels the body).
    let closed = false;
    res.once('close', () => (closed = true));
    const write = async (chunk: string): Promise<void> => {
      if (closed || res.write(chunk)) return;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    };
    await write(`${payload.slice(0, -1)},"padding":"`);
    const chunk = 'x'.repeat(64 * 1024);
    for (let written = 0; written < bytes && !closed; written += chunk.length)
      await write(chunk.slice(0, Math.min(chunk.length, bytes - written)));
    if (closed) return;
    if (endless) this.hanging.add(res);
    else res.end('"}');
  }

  /** End the answers that were never going to come, so the server can close. */
  hangUp(): void {
    for (const res of this.hanging) res.destroy();
  }

  /**
   * The common path of every API: apply the fault, do the work (or replay it where the route is
   * idempotent by key), answer. `work` performs the side effect and returns the response body;
   * it is told whether the fault was injected by a test (or is the model's own profile). Errors
   * are worded in the route's own protocol.
   */
  async perform(
    route: SimulatorRoute,
    req: IncomingMessage,
    res: ServerResponse,
    request: LedgerRequest,
    work: (fault: Fault | undefined, injected: boolean) => unknown,
    successStatus: number,
  ): Promise<void> {
    const injectedFault = this.faults.take(route, request);
    const injected = injectedFault !== undefined;
    const fault: Fault | undefined =
      injectedFault ??
      (request.model === DRIFTING_MODEL
        ? this.drift.profile()
        : request.model
          ? modelProfile(request.model)
          : undefined);
    const noted = this.ledger.record({
      route,
      idempotencyKey: request.idempotencyKey,
      model: request.model,
      at: new Date().toISOString(),
      fault: fault?.kind,
      ...(request.body === undefined ? {} : { body: request.body }),
      ...(request.bodyDigest === undefined ? {} : { bodyDigest: request.bodyDigest }),
    });
    // What the provider said to it, for whoever reads its records later (a dropped or hung
    // request never had a status line sent).
    res.once('close', () => {
      if (res.headersSent) noted.answered = res.statusCode;
    });
    const slot = ledgerKey(route, request.idempotencyKey);
    const { pending } = this.ledger;
    // A second request under a key whose first is still being worked on waits for nothing: it
    // is refused, and nothing is done for it (Stripe's 409 for concurrent requests on one key).
    if (route === 'charge' && pending.has(slot))
      return providerError(
        res,
        route,
        409,
        'There is currently another in-progress request using this Idempotency-Key; try again later',
        { type: 'invalid_request_error', code: 'idempotency_key_in_use' },
      );

    const behave = async (fault: Fault | undefined): Promise<void> => {
      if (fault?.kind === 'fail_before')
        return providerError(
          res,
          route,
          fault.status,
          fault.message ?? 'simulated failure before any effect',
          {},
          undefined,
          fault.headers,
        );
      if (fault?.kind === 'rate_limited') return rateLimited(res, route, fault.retryAfterSeconds);
      if (fault?.kind === 'overloaded')
        return route === 'messages'
          ? providerError(res, route, 529, 'Overloaded')
          : providerError(res, route, 503, 'The server is overloaded. Please try again later.', {
              type: 'server_error',
              code: 'overloaded',
            });
      if (fault?.kind === 'drop_before') return void req.socket.destroy();
      if (fault?.kind === 'hang') {
        pending.add(slot);
        this.hanging.add(res);
        return;
      }
      if (fault?.kind === 'delay') {
        // The work goes on whether or not the caller is still there, as at a real provider.
        pending.add(slot);
        await new Promise((resolve) => setTimeout(resolve, fault.ms));
        pending.delete(slot);
        return behave(fault.then);
      }
      if (fault?.kind === 'hold') {
        pending.add(slot);
        if (!this.openGates.has(fault.gate)) {
          await new Promise<void>((resolve) =>
            this.heldAtGate.set(fault.gate, [...(this.heldAtGate.get(fault.gate) ?? []), resolve]),
          );
        }
        pending.delete(slot);
        return behave(fault.then);
      }
      if (fault?.kind === 'register_after_status_lookup') {
        await new Promise<void>((resolve) =>
          this.awaitingStatusLookup.set(slot, [
            ...(this.awaitingStatusLookup.get(slot) ?? []),
            resolve,
          ]),
        );
      }

      const done =
        fault?.kind === 'key_reused'
          ? 'conflict'
          : this.ledger.execute(route, request, () => work(fault, injected));
      if (done === 'conflict') {
        return providerError(
          res,
          route,
          400,
          'Keys for idempotent requests can only be used with the same parameters they were first used with',
          { type: 'idempotency_error' },
        );
      }
      const { response, replayed } = done;
      // A repeat is answered what the first request was, its error too (Stripe keeps a 500).
      const stored = replayed ? this.ledger.storedAnswer(slot) : undefined;
      if (stored)
        return sendJson(res, stored.status, stored.body, { 'idempotent-replayed': 'true' });
      if (fault?.kind === 'fail_after') {
        const message = 'simulated failure after the effect';
        this.ledger.storeAnswer(slot, fault.status, {
          error: { message, type: fault.status >= 500 ? 'api_error' : 'invalid_request_error' },
        });
        return providerError(res, route, fault.status, message);
      }
      if (fault?.kind === 'drop_after') return void req.socket.destroy();
      const headers: Record<string, string> = {
        [route === 'messages' ? 'request-id' : 'x-request-id']: request.idempotencyKey,
      };
      if (replayed) headers['idempotent-replayed'] = 'true';
      // A repeat is answered the stored status and body, as the first request was.
      const status = successStatus;
      if (fault?.kind === 'stall_after_headers') {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.flushHeaders();
        this.hanging.add(res);
        return;
      }
      if (fault?.kind === 'oversized_body')
        return this.sendOversized(res, status, response, headers, fault.bytes, fault.endless);
      if (fault?.kind === 'files_under_own_id') {
        this.ledger.filedUnderOwnId.add(slot);
        if (fault.answer === 'lost') return void req.socket.destroy();
      }
      if (fault?.kind === 'unreadable_success') {
        if (fault.filesUnderOwnId) this.ledger.filedUnderOwnId.add(slot);
        return sendUnreadable(res, status, response, headers, fault.body);
      }
      const body =
        fault?.kind === 'answer_with'
          ? withMerged(route, response, fault.merge)
          : fault?.kind === 'files_under_own_id'
            ? withMerged(
                route,
                response,
                fault.answer === 'pending'
                  ? { status: 'pending' }
                  : { idempotencyKey: `own_${request.idempotencyKey.length}_${Date.now()}` },
              )
            : response;
      sendJson(res, status, body, headers);
    };
    await behave(fault);
  }
}

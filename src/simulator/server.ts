import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { FaultQueue, type Fault, type FaultRule, type SimulatorRoute } from './faults';

/**
 * A stand-in for remote providers over real HTTP: an OpenAI-compatible chat completions API
 * (`POST /v1/chat/completions`) and a payment-like API (`POST /v1/charges`, with a status lookup
 * by idempotency key). It keeps a ledger of side effects keyed by the Idempotency-Key header, so
 * tests can count how many times something really happened, and injects faults on request
 * (`POST /_simulator/faults`). As at the real providers, the chat APIs do the work (and bill it)
 * for every request they receive, whatever its key; only the charge API is idempotent by key, and
 * it still counts every request and every replay it answered.
 */

export interface LedgerEntry {
  route: SimulatorRoute;
  idempotencyKey: string;
  model?: string;
  /** Every request that arrived with this key, whatever became of it (faults and replays too). */
  requests: number;
  /**
   * Times the work was actually done: every request that got past its fault on the chat APIs
   * (they do not deduplicate), at most one per key on the charge API.
   */
  executions: number;
  /** Requests the charge API answered from its ledger instead of doing the work again. */
  replays: number;
}

/** One request as it reached the simulator, in arrival order. */
export interface RequestRecord {
  route: SimulatorRoute;
  idempotencyKey: string;
  model?: string;
  at: string;
  /** The fault it met, if any. */
  fault?: Fault['kind'];
}

interface StoredEntry {
  route: SimulatorRoute;
  idempotencyKey: string;
  model?: string;
  executions: number;
  replays: number;
  response: unknown;
  fingerprint: string;
}

/** Routes that, like Stripe, answer a repeated key from their ledger instead of working again. */
const IDEMPOTENT_BY_KEY: ReadonlySet<SimulatorRoute> = new Set<SimulatorRoute>(['charge']);

/**
 * Behaviour profiles, chosen by model name (for both chat APIs). Injected faults come first.
 */
export const MODEL_PROFILES: Record<string, Fault | undefined> = {
  'sim-steady': undefined,
  'sim-backup': undefined,
  'sim-hallucinates': { kind: 'extra_key' },
  'sim-prose': { kind: 'malformed_output' },
  'sim-wrongtypes': { kind: 'wrong_types' },
  'sim-slow': { kind: 'delay', ms: 2_000 },
  'sim-hangs': { kind: 'hang' },
  'sim-500-after': { kind: 'fail_after', status: 500 },
  'sim-drops': { kind: 'drop_after' },
};
export const SIMULATOR_MODELS = Object.keys(MODEL_PROFILES);
const MAX_BODY_BYTES = 1_000_000;

function summariseText(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  const firstSentence = /^.*?[.!?।](\s|$)/u.exec(clean)?.[0]?.trim() ?? clean;
  const limit = Math.max(1, Math.min(200, clean.length - 1));
  return firstSentence.length <= limit ? firstSentence : `${clean.slice(0, limit - 1).trimEnd()}…`;
}

/** The last sentence, as a differently-minded model might choose. */
function summariseTail(text: string): string {
  const sentences = text
    .replace(/\s+/g, ' ')
    .trim()
    .match(/[^.!?।]+[.!?।]?/gu) ?? [text];
  const last = sentences[sentences.length - 1]!.trim();
  return last.length < text.trim().length ? last : summariseText(text);
}

/** An answer with extra fields merged in: into a charge's body, or into a model's JSON output. */
function withMerged(
  route: SimulatorRoute,
  response: unknown,
  merge: Record<string, unknown>,
): unknown {
  if (route === 'charge' || route === 'charge-status')
    return { ...(response as Record<string, unknown>), ...merge };
  if (route === 'chat') {
    const body = structuredClone(response) as { choices: Array<{ message: { content: string } }> };
    const message = body.choices[0]!.message;
    message.content = JSON.stringify({ ...(JSON.parse(message.content) as object), ...merge });
    return body;
  }
  const body = structuredClone(response) as {
    content: Array<{ type: string; input?: Record<string, unknown> }>;
  };
  const call = body.content.find((block) => block.type === 'tool_use');
  if (call) call.input = { ...call.input, ...merge };
  return body;
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

function apiError(
  res: ServerResponse,
  status: number,
  message: string,
  type = 'invalid_request_error',
): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface SimulatorServer {
  url: string;
  server: Server;
  ledger(): LedgerEntry[];
  /** Every request that reached a provider route, in arrival order. */
  requests(): RequestRecord[];
  /** Queue a fault for a coming request (the same as `POST /_simulator/faults`). */
  inject(rule: FaultRule): void;
  /** Drop every queued fault (the same as `DELETE /_simulator/faults`). */
  clearFaults(): void;
  /** Let every request held at this gate go on, and any that comes later (`POST /_simulator/gates/<gate>`). */
  openGate(gate: string): void;
  close(): Promise<void>;
}

export async function startSimulator(
  options: { port?: number; host?: string } = {},
): Promise<SimulatorServer> {
  const ledger = new Map<string, StoredEntry>();
  const requestLog: RequestRecord[] = [];
  const faults = new FaultQueue();
  const hanging = new Set<ServerResponse>();
  /** Keys whose request arrived and is being worked on (a status lookup says "processing"). */
  const pending = new Set<string>();
  const ledgerKey = (route: SimulatorRoute, key: string): string => `${route}:${key}`;

  /** Gates the tests open; requests held at a closed gate wait for it. */
  const openGates = new Set<string>();
  const heldAtGate = new Map<string, Array<() => void>>();
  const openGate = (gate: string): void => {
    openGates.add(gate);
    for (const resume of heldAtGate.get(gate) ?? []) resume();
    heldAtGate.delete(gate);
  };

  /** Requests waiting for a status lookup of their key before they do the work. */
  const awaitingStatusLookup = new Map<string, Array<() => void>>();

  /**
   * The common path of every API: apply the fault, do the work at most once per key, answer.
   * `work` performs the side effect and returns the response body.
   */
  async function perform(
    route: SimulatorRoute,
    req: IncomingMessage,
    res: ServerResponse,
    request: { idempotencyKey: string; model?: string; fingerprint: string },
    work: (fault: Fault | undefined) => unknown,
    successStatus: number,
  ): Promise<void> {
    const fault: Fault | undefined =
      faults.take(route, request) ?? (request.model ? MODEL_PROFILES[request.model] : undefined);
    requestLog.push({
      route,
      idempotencyKey: request.idempotencyKey,
      model: request.model,
      at: new Date().toISOString(),
      fault: fault?.kind,
    });
    const slot = ledgerKey(route, request.idempotencyKey);

    const behave = async (fault: Fault | undefined): Promise<void> => {
      if (fault?.kind === 'fail_before')
        return apiError(res, fault.status, 'simulated failure before any effect', 'server_error');
      if (fault?.kind === 'drop_before') return void req.socket.destroy();
      if (fault?.kind === 'hang') {
        pending.add(slot);
        hanging.add(res);
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
        if (!openGates.has(fault.gate)) {
          await new Promise<void>((resolve) =>
            heldAtGate.set(fault.gate, [...(heldAtGate.get(fault.gate) ?? []), resolve]),
          );
        }
        pending.delete(slot);
        return behave(fault.then);
      }
      if (fault?.kind === 'register_after_status_lookup') {
        await new Promise<void>((resolve) =>
          awaitingStatusLookup.set(slot, [...(awaitingStatusLookup.get(slot) ?? []), resolve]),
        );
      }

      const previous = ledger.get(slot);
      let response: unknown;
      let replayed = false;
      if (previous && IDEMPOTENT_BY_KEY.has(route)) {
        if (previous.fingerprint !== request.fingerprint) {
          return apiError(
            res,
            409,
            'Keys for idempotent requests can only be used with the same parameters',
            'idempotency_error',
          );
        }
        previous.replays += 1;
        response = previous.response;
        replayed = true;
      } else {
        response = work(fault);
        ledger.set(slot, {
          route,
          idempotencyKey: request.idempotencyKey,
          model: request.model,
          executions: (previous?.executions ?? 0) + 1,
          replays: previous?.replays ?? 0,
          response,
          fingerprint: request.fingerprint,
        });
      }
      if (fault?.kind === 'fail_after')
        return apiError(res, fault.status, 'simulated failure after the effect', 'server_error');
      if (fault?.kind === 'drop_after') return void req.socket.destroy();
      const headers: Record<string, string> = { 'x-request-id': request.idempotencyKey };
      if (replayed) headers['idempotent-replayed'] = 'true';
      const status = replayed ? 200 : successStatus;
      if (fault?.kind === 'stall_after_headers') {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.flushHeaders();
        hanging.add(res);
        return;
      }
      const body =
        fault?.kind === 'answer_with' ? withMerged(route, response, fault.merge) : response;
      sendJson(res, status, body, headers);
    };
    await behave(fault);
  }

  /** What a model says, as the chat APIs carry it: JSON text, prose, or a structured object. */
  function answer(
    model: string,
    text: string,
    fault: Fault | undefined,
  ): { json: unknown; prose?: string } {
    // The backup model summarises differently, so tests can tell whose answer won.
    const summary = model === 'sim-backup' ? summariseTail(text) : summariseText(text);
    if (fault?.kind === 'malformed_output')
      return { json: null, prose: `Sure! Here is your summary: ${summary}` };
    if (fault?.kind === 'extra_key') return { json: { summary, confidence: 0.97 } };
    if (fault?.kind === 'wrong_types') return { json: { summary: summary.length } };
    return { json: { summary } };
  }

  async function readChatRequest(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{ model: string; text: string; idempotencyKey: string } | undefined> {
    let body: { model?: unknown; messages?: unknown };
    try {
      body = JSON.parse(await readBody(req)) as typeof body;
    } catch {
      apiError(res, 400, 'request body is not valid JSON');
      return undefined;
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      apiError(res, 400, 'model and messages are required');
      return undefined;
    }
    if (!SIMULATOR_MODELS.includes(body.model)) {
      apiError(res, 404, `The model \`${body.model}\` does not exist`, 'not_found_error');
      return undefined;
    }
    const lastUser = [...(body.messages as Array<{ role?: unknown; content?: unknown }>)]
      .reverse()
      .find((m) => m.role === 'user' && typeof m.content === 'string');
    if (!lastUser) {
      apiError(res, 400, 'no user message to answer');
      return undefined;
    }
    const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) || randomUUID();
    return { model: body.model, text: lastUser.content as string, idempotencyKey };
  }

  async function chatCompletions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await readChatRequest(req, res);
    if (!request) return;
    const { model, text, idempotencyKey } = request;
    await perform(
      'chat',
      req,
      res,
      { idempotencyKey, model, fingerprint: `${model}\n${text}` },
      (fault) => {
        const said = answer(model, text, fault);
        return {
          id: `chatcmpl-${randomUUID()}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [
            {
              index: 0,
              message: {
                role: 'assistant',
                content: said.prose ?? JSON.stringify(said.json),
                refusal: null,
              },
              finish_reason: 'stop',
              logprobs: null,
            },
          ],
          usage: {
            prompt_tokens: Math.ceil(text.length / 4),
            completion_tokens: 20,
            total_tokens: Math.ceil(text.length / 4) + 20,
          },
        };
      },
      200,
    );
  }

  /** The Anthropic Messages API: structured output comes back as a call of the forced tool. */
  async function messages(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const request = await readChatRequest(req, res);
    if (!request) return;
    const { model, text, idempotencyKey } = request;
    await perform(
      'messages',
      req,
      res,
      { idempotencyKey, model, fingerprint: `${model}\n${text}` },
      (fault) => {
        const said = answer(model, text, fault);
        return {
          id: `msg_${randomUUID().replace(/-/g, '')}`,
          type: 'message',
          role: 'assistant',
          model,
          content: said.prose
            ? [{ type: 'text', text: said.prose }]
            : [
                {
                  type: 'tool_use',
                  id: `toolu_${randomUUID().replace(/-/g, '')}`,
                  name: 'record_result',
                  input: said.json,
                },
              ],
          stop_reason: said.prose ? 'end_turn' : 'tool_use',
          stop_sequence: null,
          usage: { input_tokens: Math.ceil(text.length / 4), output_tokens: 20 },
        };
      },
      200,
    );
  }

  async function createCharge(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const idempotencyKey = req.headers['idempotency-key'];
    if (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0)
      return apiError(res, 400, 'Idempotency-Key is required');
    let body: { amountCents?: unknown; currency?: unknown; account?: unknown };
    try {
      body = JSON.parse(await readBody(req)) as typeof body;
    } catch {
      return apiError(res, 400, 'request body is not valid JSON');
    }
    const { amountCents, currency, account } = body;
    if (
      !Number.isInteger(amountCents) ||
      (amountCents as number) <= 0 ||
      typeof currency !== 'string' ||
      typeof account !== 'string'
    ) {
      return apiError(
        res,
        400,
        'amountCents (positive integer), currency and account are required',
      );
    }
    await perform(
      'charge',
      req,
      res,
      { idempotencyKey, fingerprint: JSON.stringify([amountCents, currency, account]) },
      () => ({
        id: `ch_${randomUUID().replace(/-/g, '')}`,
        status: 'succeeded',
        amountCents,
        currency,
        account,
        idempotencyKey,
      }),
      201,
    );
  }

  async function chargeStatus(res: ServerResponse, idempotencyKey: string): Promise<void> {
    const slot = ledgerKey('charge', idempotencyKey);
    const fault = faults.take('charge-status', { idempotencyKey });
    requestLog.push({
      route: 'charge-status',
      idempotencyKey,
      at: new Date().toISOString(),
      fault: fault?.kind,
    });
    try {
      if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
      if (fault?.kind === 'fail_before')
        return apiError(res, fault.status, 'simulated status lookup failure', 'server_error');
      const entry = ledger.get(slot);
      if (!entry && pending.has(slot))
        return apiError(
          res,
          409,
          'A request with this idempotency key is still being processed',
          'processing',
        );
      if (!entry)
        return apiError(
          res,
          404,
          'No charge was made with this idempotency key',
          'not_found_error',
        );
      sendJson(
        res,
        200,
        fault?.kind === 'answer_with'
          ? withMerged('charge', entry.response, fault.merge)
          : entry.response,
      );
    } finally {
      // A request that registers its key only after a lookup may go on now.
      const waiting = awaitingStatusLookup.get(slot);
      awaitingStatusLookup.delete(slot);
      for (const resume of waiting ?? []) resume();
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const route = `${req.method} ${url.pathname}`;
    const handle = async (): Promise<void> => {
      if (route === 'POST /v1/chat/completions') return chatCompletions(req, res);
      if (route === 'POST /v1/messages') return messages(req, res);
      if (route === 'POST /v1/charges') return createCharge(req, res);
      const status = /^GET \/v1\/charges\/by-key\/(.+)$/.exec(route);
      if (status) return chargeStatus(res, decodeURIComponent(status[1]!));
      if (route === 'GET /_simulator/requests') return sendJson(res, 200, { requests: requestLog });
      if (route === 'GET /healthz') return sendJson(res, 200, { ok: true });
      if (route === 'GET /_simulator/ledger')
        return sendJson(res, 200, { entries: publicLedger() });
      if (route === 'POST /_simulator/faults') {
        faults.add(JSON.parse(await readBody(req)) as FaultRule);
        return sendJson(res, 204, {});
      }
      const gate = /^POST \/_simulator\/gates\/([^/]+)$/.exec(route);
      if (gate) {
        openGate(decodeURIComponent(gate[1]!));
        return sendJson(res, 204, {});
      }
      if (route === 'DELETE /_simulator/faults') {
        faults.clear();
        return sendJson(res, 204, {});
      }
      apiError(res, 404, `no route ${route}`, 'not_found_error');
    };
    handle().catch((error: unknown) => {
      if (!res.headersSent) apiError(res, 500, (error as Error).message, 'server_error');
      else res.destroy();
    });
  });

  const publicLedger = (): LedgerEntry[] =>
    [...ledger.values()].map(({ route, idempotencyKey, model, executions, replays }) => ({
      route,
      idempotencyKey,
      ...(model === undefined ? {} : { model }),
      requests: requestLog.filter((r) => r.route === route && r.idempotencyKey === idempotencyKey)
        .length,
      executions,
      replays,
    }));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    server,
    ledger: publicLedger,
    requests: () => [...requestLog],
    inject: (rule) => faults.add(rule),
    clearFaults: () => faults.clear(),
    openGate,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';

/**
 * A stand-in for remote model providers, speaking the OpenAI chat completions wire protocol
 * over real HTTP. It keeps a ledger of side effects keyed by the Idempotency-Key header, so
 * tests can count how many times a request really took effect.
 */

interface ChatRequest {
  model?: unknown;
  messages?: unknown;
}

export interface LedgerEntry {
  idempotencyKey: string;
  model: string;
  /** Requests that arrived with this key. */
  requests: number;
  /** Times the work was actually done (a repeat with the same key is answered from the ledger). */
  executions: number;
}

const MAX_BODY_BYTES = 1_000_000;

function summariseText(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  const firstSentence = /^.*?[.!?।](\s|$)/u.exec(clean)?.[0]?.trim() ?? clean;
  const limit = Math.max(1, Math.min(200, clean.length - 1));
  return firstSentence.length <= limit ? firstSentence : `${clean.slice(0, limit - 1).trimEnd()}…`;
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  res.end(payload);
}

function openAiError(
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
  close(): Promise<void>;
}

export async function startSimulator(
  options: { port?: number; host?: string } = {},
): Promise<SimulatorServer> {
  const ledger = new Map<string, LedgerEntry & { response: unknown }>();

  async function chatCompletions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body: ChatRequest;
    try {
      body = JSON.parse(await readBody(req)) as ChatRequest;
    } catch {
      return openAiError(res, 400, 'request body is not valid JSON');
    }
    if (typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return openAiError(res, 400, 'model and messages are required');
    }
    if (body.model !== 'sim-steady') {
      return openAiError(res, 404, `The model \`${body.model}\` does not exist`, 'not_found_error');
    }
    const lastUser = [...(body.messages as Array<{ role?: unknown; content?: unknown }>)]
      .reverse()
      .find((m) => m.role === 'user' && typeof m.content === 'string');
    if (!lastUser) return openAiError(res, 400, 'no user message to answer');

    const key = req.headers['idempotency-key'];
    const idempotencyKey = typeof key === 'string' && key.length > 0 ? key : randomUUID();
    const previous = ledger.get(idempotencyKey);
    if (previous) {
      previous.requests += 1;
      return sendJson(res, 200, previous.response, {
        'x-request-id': idempotencyKey,
        'idempotent-replayed': 'true',
      });
    }
    const response = {
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: JSON.stringify({ summary: summariseText(lastUser.content as string) }),
            refusal: null,
          },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    };
    ledger.set(idempotencyKey, {
      idempotencyKey,
      model: body.model,
      requests: 1,
      executions: 1,
      response,
    });
    sendJson(res, 200, response, { 'x-request-id': idempotencyKey });
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const route = `${req.method} ${url.pathname}`;
    const handle = async (): Promise<void> => {
      if (route === 'POST /v1/chat/completions') return chatCompletions(req, res);
      if (route === 'GET /healthz') return sendJson(res, 200, { ok: true });
      if (route === 'GET /_simulator/ledger') {
        return sendJson(res, 200, {
          entries: [...ledger.values()].map(({ response: _response, ...entry }) => entry),
        });
      }
      openAiError(res, 404, `no route ${route}`, 'not_found_error');
    };
    handle().catch((error: unknown) => {
      if (!res.headersSent) openAiError(res, 500, (error as Error).message, 'server_error');
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    server,
    ledger: () => [...ledger.values()].map(({ response: _response, ...entry }) => entry),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

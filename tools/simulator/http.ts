import type { IncomingMessage, ServerResponse } from 'node:http';

/** How the simulator's modules speak HTTP: JSON answers, provider-style errors, bounded bodies. */

const MAX_BODY_BYTES = 1_000_000;

export type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/** A module's routes: the handler for `METHOD /path`, when it has one. */
export type Routes = (route: string) => Handler | undefined;

export function sendJson(
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

export function apiError(
  res: ServerResponse,
  status: number,
  message: string,
  type = 'invalid_request_error',
): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } });
}

export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

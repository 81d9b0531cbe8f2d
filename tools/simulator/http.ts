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

/**
 * A 2xx whose body cannot be read as the answer: an HTML page where the JSON should be (what a
 * proxy in front of a provider sends), or the JSON cut off halfway by a dropped connection.
 */
export function sendUnreadable(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
  kind: 'not_json' | 'cut_off',
): void {
  if (res.destroyed) return;
  if (kind === 'not_json') {
    const page = '<html><body><h1>Request accepted</h1></body></html>';
    res.writeHead(status, {
      'content-type': 'text/html',
      'content-length': Buffer.byteLength(page),
      ...headers,
    });
    res.end(page);
    return;
  }
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  // Half the promised bytes, then the connection drops.
  res.write(payload.slice(0, Math.floor(payload.length / 2)), () => res.destroy());
}

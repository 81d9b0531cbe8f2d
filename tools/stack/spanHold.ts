import { createServer, type IncomingMessage, type Server } from 'node:http';

/**
 * Where the services' spans go while the dev stack's trace backend is still being built: an
 * OTLP/HTTP receiver that keeps each export as it came (up to a bound) and answers it at once,
 * so the services' exporters neither retry against a closed port nor hold up a shutdown. Once
 * the backend runs, `deliver` sends it what was kept, and the spans of the jobs run meanwhile
 * are in it too.
 */
export interface SpanHold {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT: the services add `/v1/traces`. */
  endpoint: string;
  /** Stops taking exports and frees the port (the backend listens there next). */
  close(): Promise<void>;
  /** Sends every kept export to `endpoint`'s `/v1/traces`, oldest first. */
  deliver(endpoint: string): Promise<{ delivered: number; dropped: number; refused: number }>;
}

/** What the hold keeps at most: far more than a first session's spans; the rest is counted. */
const MAX_HELD_BYTES = 64 * 1024 * 1024;

interface HeldExport {
  body: Buffer;
  headers: Record<string, string>;
}

/** The headers an OTLP export needs to be read again: its encoding and compression. */
function exportHeaders(request: IncomingMessage): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of ['content-type', 'content-encoding']) {
    const value = request.headers[name];
    if (typeof value === 'string') kept[name] = value;
  }
  return kept;
}

/** An empty ExportTraceServiceResponse (all accepted) in the encoding the export came in. */
function acceptedAnswer(contentType: string | undefined): { type: string; body: string } {
  return contentType?.startsWith('application/json')
    ? { type: 'application/json', body: '{}' }
    : { type: 'application/x-protobuf', body: '' };
}

export async function startSpanHold(port: number, host = '127.0.0.1'): Promise<SpanHold> {
  const held: HeldExport[] = [];
  let heldBytes = 0;
  let dropped = 0;
  const server: Server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url?.split('?')[0] !== '/v1/traces') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('only POST /v1/traces\n');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (heldBytes + size <= MAX_HELD_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      if (heldBytes + size <= MAX_HELD_BYTES) {
        held.push({ body: Buffer.concat(chunks), headers: exportHeaders(request) });
        heldBytes += size;
      } else dropped += 1;
      const answer = acceptedAnswer(request.headers['content-type']);
      response.writeHead(200, { 'content-type': answer.type }).end(answer.body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return {
    endpoint: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    async deliver(endpoint) {
      let delivered = 0;
      let refused = 0;
      for (const { body, headers } of held.splice(0)) {
        const sent = await fetch(`${endpoint}/v1/traces`, { method: 'POST', headers, body }).then(
          (answer) => answer.ok,
          () => false,
        );
        if (sent) delivered += 1;
        else refused += 1;
      }
      heldBytes = 0;
      return { delivered, dropped, refused };
    },
  };
}

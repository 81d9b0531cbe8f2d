import { connect } from 'node:net';

/** An HTTP answer read off the socket byte for byte. */
export interface RawAnswer {
  status: number;
  /** Header names lower-cased; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

/** What became of a raw request: an answer, or the reason there was none. */
export type RawOutcome =
  { kind: 'answer'; answer: RawAnswer } | { kind: 'no-answer'; reason: string; received: string };

const HEAD_END = Buffer.from('\r\n\r\n');

interface Head {
  status: number;
  headers: Record<string, string>;
  bodyStart: number;
}

function parseHead(bytes: Buffer): Head | undefined {
  const end = bytes.indexOf(HEAD_END);
  if (end < 0) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!match) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const cut = line.indexOf(':');
    const name = line.slice(0, cut).trim().toLowerCase();
    const value = line.slice(cut + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return { status: Number(match[1]), headers, bodyStart: end + HEAD_END.length };
}

/** The decoded body of a chunked answer, once its last chunk has arrived. */
function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error('a malformed chunk size');
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (bytes.length < start + size + 2) return undefined;
    parts.push(bytes.subarray(start, start + size));
    at = start + size + 2;
  }
}

/**
 * The final answer in `bytes` (interim 1xx answers skipped), once it is complete: by
 * Content-Length, by the last chunk, or — with neither — when the server has closed.
 */
function completeAnswer(
  bytes: Buffer,
  headRequest: boolean,
  closed: boolean,
): RawAnswer | undefined {
  return answerAndRest(bytes, headRequest, closed)?.answer;
}

/** The first complete answer in `bytes` and what follows it, when it is framed by length. */
function answerAndRest(
  bytes: Buffer,
  headRequest: boolean,
  closed: boolean,
): { answer: RawAnswer; rest: Buffer } | undefined {
  let rest = bytes;
  for (;;) {
    const head = parseHead(rest);
    if (!head) return undefined;
    if (head.status >= 100 && head.status < 200) {
      rest = rest.subarray(head.bodyStart);
      continue;
    }
    const body = rest.subarray(head.bodyStart);
    const { status, headers } = head;
    const none = Buffer.alloc(0);
    if (headRequest || status === 204 || status === 304)
      return { answer: { status, headers, body: none }, rest: body };
    if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
      const decoded = dechunk(body);
      // A chunked answer's end is not tracked: nothing follows it in these tests.
      return decoded && { answer: { status, headers, body: decoded }, rest: none };
    }
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      return body.length >= length
        ? {
            answer: { status, headers, body: body.subarray(0, length) },
            rest: body.subarray(length),
          }
        : undefined;
    }
    return closed ? { answer: { status, headers, body }, rest: none } : undefined;
  }
}

/** Every complete answer in `bytes`, in order (answers to requests sent on one connection). */
export function answersIn(bytes: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = bytes;
  for (;;) {
    const next = answerAndRest(rest, false, false);
    if (!next) return answers;
    answers.push(next.answer);
    rest = next.rest;
  }
}

/** What a client saw that streamed a body to the server: its writes, and what came back. */
export interface StreamedRequest {
  /** Body bytes handed to the socket before it ended or failed. */
  written: number;
  /** The first socket error (a reset or a broken pipe), if any. */
  error?: string;
  received: Buffer;
}

/**
 * Sends `head`, then `bodyLength` bytes of body in 1 MiB writes (each after the last has been
 * taken), then `after`, reading everything the server sends meanwhile; resolves once the server
 * has closed the connection or the socket has failed. Reads while it writes, as a careful
 * client does, so an early answer is seen even if the upload is cut off. Like Node's sockets it
 * stops sending once the server has closed its side, unless `keepSendingAfterClose` (a client
 * that does not look).
 */
export function streamRequest(
  port: number,
  head: string,
  bodyLength: number,
  after = '',
  options: { keepSendingAfterClose?: boolean } = {},
): Promise<StreamedRequest> {
  return new Promise((resolve) => {
    const socket = connect({
      host: '127.0.0.1',
      port,
      allowHalfOpen: options.keepSendingAfterClose ?? false,
    });
    const received: Buffer[] = [];
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    let written = 0;
    let error: string | undefined;
    socket.on('data', (data: Buffer) => received.push(data));
    socket.on('error', (failure: NodeJS.ErrnoException) => {
      error ??= failure.code ?? failure.message;
    });
    socket.on('close', () => resolve({ written, error, received: Buffer.concat(received) }));
    const writeMore = () => {
      while (!socket.destroyed && written < bodyLength) {
        const piece = chunk.subarray(0, Math.min(chunk.length, bodyLength - written));
        written += piece.length;
        if (!socket.write(piece)) {
          socket.once('drain', writeMore);
          return;
        }
      }
      // Half-closing tells the server nothing more comes, so it closes once it has answered.
      if (!socket.destroyed) socket.end(after);
    };
    socket.write(head, writeMore);
  });
}

/**
 * Writes `bytes` to the server as they are (no client-side checks of header values or framing)
 * and reads its answer. Ends with 'no-answer' when the server closes or resets the connection
 * without a complete answer, or nothing complete arrives within `timeoutMs`.
 */
export function sendRaw(
  port: number,
  bytes: Buffer,
  options: { headRequest: boolean; timeoutMs: number },
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    let settled = false;
    const settle = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const noAnswer = (reason: string) =>
      settle({
        kind: 'no-answer',
        reason,
        received: Buffer.concat(received).toString('latin1').slice(0, 500),
      });
    const check = (closed: boolean) => {
      try {
        const answer = completeAnswer(Buffer.concat(received), options.headRequest, closed);
        if (answer) settle({ kind: 'answer', answer });
        else if (closed) noAnswer('the server closed the connection without a complete answer');
      } catch (error) {
        noAnswer(`an unreadable answer: ${(error as Error).message}`);
      }
    };
    const timer = setTimeout(
      () => noAnswer(`no answer within ${options.timeoutMs} ms`),
      options.timeoutMs,
    );
    socket.on('data', (chunk: Buffer) => {
      received.push(chunk);
      check(false);
    });
    socket.on('end', () => check(true));
    socket.on('close', () => check(true));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // A reset after a complete answer is fine (the server closed while we were still writing).
      if (!settled) check(true);
      if (!settled) noAnswer(`socket error ${error.code ?? error.message}`);
    });
    socket.write(bytes);
  });
}

/** What a client saw that sent its request a byte at a time. */
export interface TrickledRequest {
  /** Bytes handed to the socket before it closed (or the client gave up). */
  written: number;
  /** From the connection to the server closing it; undefined when the client gave up first. */
  closedAfterMs?: number;
  received: Buffer;
}

/**
 * Sends `atOnce`, then `trickled` one byte every `intervalMs` (a slow or malicious client), and
 * resolves when the connection closes — or, if it is still open after `giveUpAfterMs`, closes it
 * itself and says so (closedAfterMs undefined).
 */
export function trickleRequest(
  port: number,
  atOnce: string,
  trickled: string,
  options: { intervalMs: number; giveUpAfterMs: number },
): Promise<TrickledRequest> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    let written = 0;
    let gaveUp = false;
    const ticker = setInterval(() => {
      if (written >= trickled.length || socket.destroyed) return;
      socket.write(trickled[written]!);
      written += 1;
    }, options.intervalMs);
    const giveUp = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, options.giveUpAfterMs);
    socket.on('data', (data: Buffer) => received.push(data));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(ticker);
      clearTimeout(giveUp);
      resolve({
        written,
        ...(gaveUp ? {} : { closedAfterMs: Date.now() - started }),
        received: Buffer.concat(received),
      });
    });
    if (atOnce) socket.write(atOnce);
  });
}

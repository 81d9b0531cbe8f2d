import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { standaloneProblem } from '../domain/problems';
import { rawProblemResponse, sendProblem } from './problems';
import { type DiscardBounds, discardRestOfBody } from './refusedBodies';

/**
 * Node's HTTP server answers a few requests by itself, before Fastify sees them: a bare 400 for
 * HTTP/1.1 without Host, a bare 417 for an Expect other than 100-continue, and CONNECT it drops
 * without a word. These hooks make each of them a problem document like every other refusal.
 * Call before the routes are registered (the Host check is an onRequest hook of the root).
 */
export function answerProtocolRefusals<Logger extends FastifyBaseLogger>(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, Logger>,
  refusedBodyBounds: DiscardBounds,
): void {
  app.server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.end(rawProblemResponse('not-found', `No route CONNECT ${request.url ?? ''}.`));
  });

  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const { status, headers, body } = standaloneProblem(
      'expectation-failed',
      'Send no Expect header, or Expect: 100-continue.',
    );
    // Node would otherwise drain a body still arriving without limit.
    discardRestOfBody(request, refusedBodyBounds);
    response.writeHead(status, headers).end(body);
  });

  // Node's own Host check is off (requireHostHeader: false in app.ts) so that this one answers.
  app.addHook('onRequest', async (request, reply) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
      return sendProblem(reply, 'malformed-request', 'HTTP/1.1 requests must carry a Host header.');
  });
}

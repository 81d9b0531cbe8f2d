import type { FastifyReply } from 'fastify';
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import {
  PROBLEM_TYPES,
  problemTypeUri,
  retryHeaders,
  standaloneProblem,
  type ProblemType,
} from '../domain/problems';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  [extension: string]: unknown;
}

/** A problem document, as the OpenAPI document shows it. */
export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number(),
    detail: z.string().optional(),
  })
  .loose()
  .describe('RFC 9457 problem details (application/problem+json)');

/** Sends an RFC 9457 problem document, with the retry headers its type's row gives. */
export function sendProblem(
  reply: FastifyReply,
  type: ProblemType,
  detail?: string,
  extensions: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): FastifyReply {
  const { status, title } = PROBLEM_TYPES[type];
  const body: Problem = {
    type: problemTypeUri(type),
    title,
    status,
    ...(detail ? { detail } : {}),
    instance: reply.request.url,
    ...extensions,
  };
  return reply
    .code(status)
    .headers({ ...retryHeaders(type, extensions), ...headers })
    .type('application/problem+json')
    .send(body);
}

/** A 404 problem that names what was looked for: "No job <id>.", "No route GET /x.". */
export function sendNotFound(reply: FastifyReply, what: string): FastifyReply {
  return sendProblem(reply, 'not-found', `No ${what}.`);
}

/**
 * A problem written straight to the socket, for requests Node's HTTP server takes over before
 * any route sees them (a NUL or control character in a header, oversized headers, CONNECT).
 */
export function rawProblemResponse(type: ProblemType, detail: string): string {
  const { status, headers, body } = standaloneProblem(type, detail);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${lines.join('')}\r\n${body}`;
}

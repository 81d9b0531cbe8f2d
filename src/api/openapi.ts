import type { OpenAPIV3 } from 'openapi-types';
import { z } from 'zod';
import { PROBLEM_TYPES } from '../domain/problems';
import { problemSchema } from './problems';
import { SIGNATURE_HEADER } from './signatures';
import { storableJson, storableText } from './storable';

/** Statuses any route can answer: an undecodable URL (400), a path segment too long (414), an Expect other than 100-continue (417), a fault (500), PostgreSQL or Temporal away (503). */
const EVERY_ROUTE = [400, 414, 417, 500, 503] as const;
/** …and any route that takes a JSON body: too large (413), not JSON (415). */
export const BODY_ERRORS = [413, 415] as const;

/**
 * The problem responses of a route, one per status, each described by the problem types that
 * answer with it, so the document lists every status a route can answer, not a range.
 */
export function problemResponses(...statuses: number[]): Record<number, typeof problemSchema> {
  const all = [...new Set([...EVERY_ROUTE, ...statuses])].sort((a, b) => a - b);
  return Object.fromEntries(
    all.map((status) => {
      const types = Object.entries(PROBLEM_TYPES)
        .filter(([, problem]) => problem.status === status)
        .map(([type]) => type);
      return [status, problemSchema.describe(`application/problem+json: ${types.join(', ')}`)];
    }),
  );
}

/** The provider callback's body, as providers send it (the route parses it itself: it is signed). */
export const callbackBodySchema = z.discriminatedUnion('status', [
  z.strictObject({
    attemptId: storableText(z.string().max(100)),
    status: z.literal('succeeded'),
    output: storableJson,
  }),
  z.strictObject({
    attemptId: storableText(z.string().max(100)),
    status: z.literal('failed'),
    error: storableText(z.string().max(2000)),
  }),
]);

type Operation = OpenAPIV3.OperationObject;

function operation(doc: OpenAPIV3.Document, path: string, method: 'get' | 'post'): Operation {
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`the OpenAPI document has no ${method.toUpperCase()} ${path}`);
  return found;
}

function requireHeader(op: Operation, name: string): void {
  for (const parameter of op.parameters ?? []) {
    if ('in' in parameter && parameter.in === 'header' && parameter.name === name)
      parameter.required = true;
  }
}

/**
 * What the route schemas cannot say, added to the generated document: errors are
 * application/problem+json (the routes send them so), Idempotency-Key is required on create
 * (the route answers its absence with its own problem, so the schema keeps it optional), the
 * callback's signed body and signature header (the route reads the raw bytes), and /metrics
 * answers Prometheus text, and a 204 has no body. test/openApiTruth.test.ts holds real responses against the result.
 */
export function amendOpenApiDocument(doc: OpenAPIV3.Document): OpenAPIV3.Document {
  for (const methods of Object.values(doc.paths)) {
    for (const op of Object.values(methods ?? {}) as Operation[]) {
      if (typeof op !== 'object' || !op.responses) continue;
      for (const [status, response] of Object.entries(op.responses)) {
        // No Content has none: the route schema can only say so with a JSON body.
        if (status === '204' && 'content' in response) delete response.content;
        if (!/^[45]/.test(status) || !('content' in response) || !response.content) continue;
        const json = response.content['application/json'];
        if (json) response.content = { 'application/problem+json': json };
      }
    }
  }
  requireHeader(operation(doc, '/v1/jobs', 'post'), 'idempotency-key');

  const callback = operation(doc, '/v1/callbacks/{provider}', 'post');
  callback.parameters = [
    ...(callback.parameters ?? []),
    {
      in: 'header',
      name: SIGNATURE_HEADER,
      required: true,
      description:
        't=<unix seconds>,v1=<hex HMAC-SHA256, with the provider secret, of "<t>.<exact body>">',
      schema: { type: 'string' },
    },
  ];
  callback.requestBody = {
    required: true,
    content: {
      'application/json': {
        schema: z.toJSONSchema(callbackBodySchema, {
          target: 'openapi-3.0',
        }) as OpenAPIV3.SchemaObject,
      },
    },
  };

  const metrics = operation(doc, '/metrics', 'get');
  metrics.responses['200'] = {
    description:
      'Prometheus text exposition format; OpenMetrics, with trace ids as exemplars, when Accept names application/openmetrics-text',
    content: {
      'text/plain': { schema: { type: 'string' } },
      'application/openmetrics-text': { schema: { type: 'string' } },
    },
  };
  return doc;
}

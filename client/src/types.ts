import type { paths } from './openapi';

/** What the API answers on `status` for a route's method, from its OpenAPI document. */
type Answer<
  Path extends keyof paths,
  Method extends 'get' | 'post' | 'delete',
  Status extends number,
> = paths[Path][Method] extends {
  responses: { [S in Status]: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

/** What the API takes as a route's JSON body. */
type BodyOf<Path extends keyof paths> = paths[Path]['post'] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? NonNullable<Body>
  : never;

/** A job, as `GET /v1/jobs/:id` answers it. */
export type Job = Answer<'/v1/jobs/{id}', 'get', 200>;
/** A page of jobs, as `GET /v1/jobs` answers it. */
export type JobPage = Answer<'/v1/jobs', 'get', 200>;
/** A job as a list shows it: `input` and `result` only when the list was asked for them. */
export type ListedJob = JobPage['jobs'][number];
export type JobStatus = Job['status'];
/** A new attempt, as `POST /v1/jobs/:id/attempts` answers it. */
export type Attempt = Answer<'/v1/jobs/{id}/attempts', 'post', 202>;
/** The body of a create, without the Idempotency-Key (a header). */
export type CreateJobBody = BodyOf<'/v1/jobs'>;
export type ListInclusion = 'input' | 'result';

/** A webhook endpoint, as `GET /v1/webhooks/:id` answers it (never with its secret). */
export type WebhookEndpoint = Answer<'/v1/webhooks/{id}', 'get', 200>;
/** A registered endpoint with its signing secret: `POST /v1/webhooks`, the only answer carrying it. */
export type CreatedWebhookEndpoint = Answer<'/v1/webhooks', 'post', 201>;
/** What a registration takes: `url`, and optionally `events` and `description`. */
export type CreateWebhookEndpointBody = BodyOf<'/v1/webhooks'>;
export type WebhookEvent = WebhookEndpoint['events'][number];
/** A new secret, and until when the one it replaces still signs. */
export type SecretRotation = Answer<'/v1/webhooks/{id}/secret-rotations', 'post', 200>;
/** One event of a job to one endpoint, with every try. */
export type WebhookDelivery = Answer<
  '/v1/jobs/{id}/webhook-deliveries',
  'get',
  200
>['deliveries'][number];

import type { paths } from './openapi';

/** What the API answers on `status` for a route's method, from its OpenAPI document. */
type Answer<
  Path extends keyof paths,
  Method extends 'get' | 'post',
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

/** onejob-client: the typed HTTP client of onejob, and the verifier of its webhooks. */
export { MAX_ERROR_BODY_BYTES, OneJobClient, OneJobProblemError } from './client';
export type { CreatedJob, CreateJobInput, OneJobClientOptions, Problem } from './client';
export type {
  Attempt,
  CreatedWebhookEndpoint,
  CreateWebhookEndpointBody,
  Job,
  JobPage,
  JobStatus,
  ListedJob,
  ListInclusion,
  SecretRotation,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEvent,
} from './types';
export { verifyWebhook, WebhookVerificationError } from './webhooks';
export type { VerifyWebhookOptions } from './webhooks';
export { MemoryWebhookIdStore, WebhookDeduplicator } from './deduplicate';
export type { WebhookDeduplicatorOptions, WebhookIdStore } from './deduplicate';
export type { paths } from './openapi';

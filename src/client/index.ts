// The HTTP client is its own package (client/, published as onejob-client); the server package
// keeps the Temporal-native entry, which needs the workflow's definitions.
export { IdempotencyKeyReuseError, InvalidJobIdentityError, startJob } from './temporal';
export type { StartedJob, StartJobRequest } from './temporal';

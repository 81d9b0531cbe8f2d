/**
 * The kinds of provider there are: what a job type names as able to serve it, and what a
 * provider's config says it is. Here, outside both jobTypes/ and providers/, so each may import
 * it without importing the other (providers/ needs the job type contracts).
 */
export type ProviderKind = 'openai-compatible' | 'anthropic' | 'http';

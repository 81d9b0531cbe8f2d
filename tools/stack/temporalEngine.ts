/**
 * Which Temporal engine `npm start` and the tests run when no TEMPORAL_ADDRESS is given:
 * - `dev`: `temporal server start-dev` (SQLite; fast to start; the default),
 * - `cluster`: the Temporal server on PostgreSQL with SQL visibility, the production engine.
 */
export type TemporalEngineKind = 'dev' | 'cluster';

export const TEMPORAL_ENGINE_VARIABLE = 'ONEJOB_TEMPORAL_ENGINE';

export function temporalEngineKind(env: NodeJS.ProcessEnv = process.env): TemporalEngineKind {
  const value = env[TEMPORAL_ENGINE_VARIABLE]?.trim() || 'dev';
  if (value === 'dev' || value === 'cluster') return value;
  throw new Error(`${TEMPORAL_ENGINE_VARIABLE}=${value} is not an engine: use "dev" or "cluster"`);
}

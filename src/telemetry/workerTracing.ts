import { startTracing } from './tracing';

/** The worker's tracing, started before anything else is loaded (http, pg): see startTracing. */
export const workerTracing = startTracing('onejob-worker');

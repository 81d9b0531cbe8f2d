import { startTracing } from './tracing';

/** The api's tracing, started before anything else is loaded (http, pg): see startTracing. */
export const apiTracing = startTracing('onejob-api');

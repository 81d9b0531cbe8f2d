import pino from 'pino';
import { sampledSpanIds } from './telemetry/spans';

export type Logger = pino.Logger;

/** Structured JSON logs. Tokens and API keys are never logged; headers that carry them are redacted. */
export function createLogger(
  name: string,
  level = process.env.LOG_LEVEL ?? 'info',
  destination?: pino.DestinationStream,
): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'headers.authorization',
        'apiKey',
        '*.apiKey',
        'token',
        '*.token',
      ],
      censor: '[redacted]',
    },
    // A line written inside a traced request or job names its trace and span, so a log line
    // leads to the trace and back. Where nothing traces there is no span: nothing is added.
    mixin: traceFields,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The trace and span a line is written in, when it is written inside a recorded span. */
function traceFields(): { traceId?: string; spanId?: string } {
  return sampledSpanIds() ?? {};
}

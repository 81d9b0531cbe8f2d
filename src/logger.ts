import pino from 'pino';

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
  };
  return destination ? pino(options, destination) : pino(options);
}

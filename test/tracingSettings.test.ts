import { tracingWanted } from '../src/telemetry/tracing';
import { devStackConfig } from '../tools/stack/portCheck';

/**
 * One rule decides whether the services trace (the standard OTEL_* variables), and npm start's
 * Jaeger follows it: it runs exactly when the services would trace into it and nothing else
 * was asked for.
 */
const cases: Array<[string, NodeJS.ProcessEnv, { services: boolean; jaeger: boolean }]> = [
  ['nothing set', {}, { services: false, jaeger: true }],
  [
    'an endpoint of your own',
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' },
    { services: true, jaeger: false },
  ],
  [
    'a traces-only endpoint',
    { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://otel:4318/v1/traces' },
    { services: true, jaeger: false },
  ],
  [
    'OTEL_TRACES_EXPORTER=none',
    { OTEL_TRACES_EXPORTER: 'none' },
    { services: false, jaeger: false },
  ],
  [
    'OTEL_SDK_DISABLED with an endpoint',
    { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318' },
    { services: false, jaeger: false },
  ],
  ['ONEJOB_TRACE_UI=off', { ONEJOB_TRACE_UI: 'off' }, { services: false, jaeger: false }],
];

test.each(cases)(
  '%s: whether the services trace, and whether npm start runs Jaeger',
  (_name, env, expected) => {
    expect({
      services: tracingWanted(env),
      jaeger: devStackConfig(env).traces,
    }).toEqual(expected);
  },
);

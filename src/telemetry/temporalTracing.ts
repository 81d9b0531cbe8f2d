/**
 * One trace per job across Temporal: what a client starts, signals or updates carries its
 * caller's trace in a Temporal header (Temporal's OpenTelemetry client interceptor); the
 * workflow joins it (workflows/tracing.ts), and so does each activity it schedules. Only where
 * the process traces (telemetry/tracing.ts): otherwise none of this is loaded.
 */
import type { ClientInterceptors } from '@temporalio/client';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import { carriesTrace } from '../workflows/traceHeader';
import type { Tracing } from './tracing';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded only when the process traces */
const clientSide = () =>
  require('@temporalio/interceptors-opentelemetry/lib/client') as typeof import('@temporalio/interceptors-opentelemetry/lib/client');
const workerSide = () =>
  require('@temporalio/interceptors-opentelemetry/lib/worker') as typeof import('@temporalio/interceptors-opentelemetry/lib/worker');
/* eslint-enable @typescript-eslint/no-require-imports */

/** The workflow interceptors' module, for a bundle (bundleWorkflows.ts) or a worker that bundles. */
export const WORKFLOW_TRACING_MODULE = require.resolve('../workflows/tracing');

/** A Temporal client's interceptors: the trace goes along when the process traces. */
export function tracingClientInterceptors(tracing: Tracing | undefined): ClientInterceptors {
  if (!tracing) return {};
  return { workflow: [new (clientSide().OpenTelemetryWorkflowClientInterceptor)()] };
}

/**
 * What a worker adds to trace. Its activities' spans join the trace their workflow passed on
 * (an activity scheduled by an untraced run starts none). The `exporter` sink takes the workflow
 * sandbox's ended spans into this process's export; it is registered even where the worker
 * does not trace, since a run started traced may come to any worker: there, they are dropped.
 */
export function tracingWorkerOptions(tracing: Tracing | undefined): {
  interceptors: Pick<WorkerInterceptors, 'activity'>;
  sinks: InjectedSinks<OpenTelemetrySinks>;
} {
  const sinks: InjectedSinks<OpenTelemetrySinks> = {
    exporter: {
      export: {
        fn: (info, spans) => {
          if (!tracing) return;
          tracing.exportEnded(
            spans.map(({ parentSpanId, instrumentationLibrary, spanContext, ...span }) => ({
              ...span,
              attributes: {
                ...span.attributes,
                temporalWorkflowId: info.workflowId,
                run_id: info.runId,
                temporalWorkflowType: info.workflowType,
              },
              spanContext: () => ({ ...spanContext, traceState: undefined }),
              ...(parentSpanId
                ? {
                    parentSpanContext: {
                      traceId: spanContext.traceId,
                      spanId: parentSpanId,
                      traceFlags: spanContext.traceFlags,
                    },
                  }
                : {}),
              instrumentationScope: instrumentationLibrary,
            })),
          );
        },
      },
    },
  };
  if (!tracing) return { interceptors: {}, sinks };
  const { OpenTelemetryActivityInboundInterceptor, OpenTelemetryActivityOutboundInterceptor } =
    workerSide();
  return {
    interceptors: {
      activity: [
        (ctx) => {
          const traced = new OpenTelemetryActivityInboundInterceptor(ctx);
          return {
            inbound: {
              execute: (input, next) =>
                carriesTrace(input.headers) ? traced.execute(input, next) : next(input),
            },
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          };
        },
      ],
    },
    sinks,
  };
}

/**
 * The workflow side of a job's trace: Temporal's OpenTelemetry workflow interceptors, gated so
 * that a run is traced only when the request that started it carried a sampled trace (its start
 * header, recorded in the history). A run started untraced (every history recorded before
 * tracing, any job started while tracing was off) goes through none of their code, so it
 * replays exactly as it ran; a traced run replays its own spans from the same header. Signals
 * and updates are traced by their own headers, which their history events keep too.
 *
 * Loaded into the workflow bundle beside the workflows (bundleWorkflows.ts); the spans leave the
 * sandbox through the `exporter` sink, which every worker registers (telemetry/temporalTracing.ts).
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { carriesTrace } from './traceHeader';

export const interceptors = (): WorkflowInterceptors => {
  // Both made on first use only: an untraced run never builds a tracer.
  let tracedInbound: OpenTelemetryInboundInterceptor | undefined;
  let tracedOutbound: OpenTelemetryOutboundInterceptor | undefined;
  const inbound = (): OpenTelemetryInboundInterceptor =>
    (tracedInbound ??= new OpenTelemetryInboundInterceptor());
  const outbound = (): OpenTelemetryOutboundInterceptor =>
    (tracedOutbound ??= new OpenTelemetryOutboundInterceptor());
  // Set by the run's start, before any of its code runs: what it schedules joins its trace.
  let runTraced = false;

  const gatedInbound: WorkflowInboundCallsInterceptor = {
    execute(input, next) {
      if (!carriesTrace(input.headers)) return next(input);
      runTraced = true;
      return inbound().execute(input, next);
    },
    handleSignal: (input, next) =>
      carriesTrace(input.headers) ? inbound().handleSignal(input, next) : next(input),
    validateUpdate: (input, next) =>
      carriesTrace(input.headers) ? inbound().validateUpdate(input, next) : next(input),
    handleUpdate: (input, next) =>
      carriesTrace(input.headers) ? inbound().handleUpdate(input, next) : next(input),
  };
  const gatedOutbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity: (input, next) =>
      runTraced ? outbound().scheduleActivity(input, next) : next(input),
    scheduleLocalActivity: (input, next) =>
      runTraced ? outbound().scheduleLocalActivity(input, next) : next(input),
    continueAsNew: (input, next) =>
      runTraced ? outbound().continueAsNew(input, next) : next(input),
    signalWorkflow: (input, next) =>
      runTraced ? outbound().signalWorkflow(input, next) : next(input),
    startChildWorkflowExecution: (input, next) =>
      runTraced ? outbound().startChildWorkflowExecution(input, next) : next(input),
    // The workflow's log lines name the span they were written in.
    getLogAttributes: (input, next) =>
      runTraced ? outbound().getLogAttributes(input, next) : next(input),
  };
  return {
    inbound: [gatedInbound],
    outbound: [gatedOutbound],
    internals: [new OpenTelemetryInternalsInterceptor()],
  };
};

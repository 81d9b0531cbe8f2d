import path from 'node:path';
import { findJaeger, obtainJaeger, startJaeger, type Jaeger } from './jaeger';
import { startSpanHold, type SpanHold } from './spanHold';

/**
 * The dev stack's trace backend: Jaeger, never on the path to the first answer. A cached Jaeger
 * starts with the stack (a second). An unbuilt one is built after the stack serves, in the
 * background; until it runs, a span hold takes the services' spans on Jaeger's OTLP port, and
 * hands them over once Jaeger listens there.
 */
export interface TraceBackend {
  /** For the services' OTEL_EXPORTER_OTLP_ENDPOINT: the same port before and after Jaeger. */
  otlpEndpoint: string;
  /** The banner's lines for traces: only addresses that answer now. */
  bannerLines(): string[];
  /** Once the stack serves: builds Jaeger if it must, starts it, hands it the held spans. */
  finishInBackground(): void;
  stop(): Promise<void>;
}

export interface TraceBackendOptions {
  stateDir: string;
  queryPort: number;
  otlpPort: number;
  log: (line: string) => void;
  /** Called once Jaeger's query API answers (npm start records it for the CLI). */
  onQueryApi?: (queryUrl: string) => void;
}

const NO_UI = 'no web UI in this build: docs/operators.md#traces';

export async function startTraceBackend(options: TraceBackendOptions): Promise<TraceBackend> {
  const { log } = options;
  const dir = path.join(options.stateDir, 'jaeger');
  const ports = { query: options.queryPort, otlpHttp: options.otlpPort };
  const cached = findJaeger();
  let jaeger: Jaeger | undefined;
  let hold: SpanHold | undefined;
  if (cached) {
    jaeger = await startJaeger({ binary: cached, dir, ports });
    options.onQueryApi?.(jaeger.queryUrl);
  } else {
    hold = await startSpanHold(options.otlpPort);
  }
  const otlpEndpoint = jaeger?.otlpEndpoint ?? hold!.endpoint;
  const building = new AbortController();
  let background: Promise<void> | undefined;

  const buildAndStart = async (): Promise<void> => {
    const signal = building.signal;
    const binary = await obtainJaeger(log, { signal, background: true });
    signal.throwIfAborted();
    // The hold frees the port; the services' exporters retry the moment it takes to start.
    await hold!.close();
    jaeger = await startJaeger({ binary, dir, ports });
    const handed = await hold!.deliver(jaeger.otlpEndpoint);
    hold = undefined;
    options.onQueryApi?.(jaeger.queryUrl);
    const lost = handed.dropped + handed.refused;
    log(
      `Jaeger is up: query API ${jaeger.queryUrl}/api/services (${NO_UI}); ` +
        `${handed.delivered} span exports held while it built are in it` +
        (lost > 0 ? `, ${lost} lost (over the hold's bound, or refused)` : '') +
        "; `npx onejob jobs trace <job id>` prints a job's trace",
    );
  };

  return {
    otlpEndpoint,
    bannerLines: () =>
      jaeger
        ? [
            `  Traces          \`npx onejob jobs trace <job id>\`   (Jaeger, in memory; ${NO_UI})`,
            `    query API     ${jaeger.queryUrl}/api/services   (then /api/traces/<trace id>)`,
            `    OTLP in       ${jaeger.otlpEndpoint}/v1/traces   (where the services send spans)`,
          ]
        : [
            '  Traces          Jaeger is built in the background (first start only); a line says when it is up',
            `    OTLP in       ${otlpEndpoint}/v1/traces   (held by npm start while Jaeger builds, then handed to it)`,
          ],
    finishInBackground() {
      if (jaeger || background) return;
      background = buildAndStart().catch((error: unknown) => {
        if (building.signal.aborted) return;
        log(
          `Jaeger could not be built or started, so this run keeps no traces: ${(error as Error).message}`,
        );
      });
    },
    async stop() {
      building.abort(new Error('npm start is stopping'));
      await background;
      await jaeger?.stop();
      await hold?.close();
    },
  };
}

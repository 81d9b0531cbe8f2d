import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Behaviour } from './behaviour';
import { chargeRoutes } from './chargeRoutes';
import { chatRoutes } from './chatRoutes';
import { chargeSettings, controlRoutes } from './controlRoutes';
import { countRoutes } from './countRoutes';
import type { DriftSettings } from './drift';
import { FaultQueue, type FaultRule } from './faults';
import { apiError } from './http';
import { Ledger, type ChargeSettings, type LedgerEntry, type RequestRecord } from './ledger';

export type { LedgerEntry, RequestRecord } from './ledger';
export { MODEL_PROFILES, SIMULATOR_MODELS } from './models';

/**
 * A stand-in for remote providers over real HTTP: an OpenAI-compatible chat completions API
 * (`POST /v1/chat/completions`), Anthropic's messages API, their token-count endpoints
 * (countRoutes.ts) and a payment-like API (`POST /v1/charges`, with a status lookup
 * by idempotency key). It keeps a ledger of side effects keyed by the Idempotency-Key header, so
 * tests can count how many times something really happened, and injects faults on request
 * (`POST /_simulator/faults`). As at the real providers, the chat APIs do the work (and bill it)
 * for every request they receive, whatever its key; only the charge API is idempotent by key, and
 * it still counts every request and every replay it answered.
 *
 * This module puts the parts together: the ledger (ledger.ts), the fault behaviour every API
 * shares (behaviour.ts), the chat APIs (chatRoutes.ts), the charge API (chargeRoutes.ts) and the
 * simulator's own routes (controlRoutes.ts).
 */

export interface SimulatorServer {
  url: string;
  server: Server;
  ledger(): LedgerEntry[];
  /** Every request that reached a provider route, in arrival order. */
  requests(): RequestRecord[];
  /** Queue a fault for a coming request (the same as `POST /_simulator/faults`). */
  inject(rule: FaultRule): void;
  /** Drop every queued fault (the same as `DELETE /_simulator/faults`). */
  clearFaults(): void;
  /** Let every request held at this gate go on, and any that comes later (`POST /_simulator/gates/<gate>`). */
  openGate(gate: string): void;
  /** The charge API's key window and search lag (the same as `PUT /_simulator/settings`). */
  configureCharges(settings: Partial<ChargeSettings>): void;
  /** When and how often `sim-drifts` starts breaking its answers (`PUT /_simulator/settings` `drift`). */
  configureDrift(settings: DriftSettings): void;
  close(): Promise<void>;
}

export async function startSimulator(
  options: { port?: number; host?: string } = {},
): Promise<SimulatorServer> {
  const ledger = new Ledger();
  const faults = new FaultQueue();
  const behaviour = new Behaviour(ledger, faults);
  const routes = [
    chatRoutes(behaviour),
    countRoutes(),
    chargeRoutes(ledger, faults, behaviour),
    controlRoutes(ledger, faults, behaviour),
  ];

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const route = `${req.method} ${url.pathname}`;
    const handle = async (): Promise<void> => {
      for (const table of routes) {
        const handler = table(route);
        if (handler) return handler(req, res);
      }
      apiError(res, 404, `no route ${route}`, 'not_found_error');
    };
    handle().catch((error: unknown) => {
      if (!res.headersSent) apiError(res, 500, (error as Error).message, 'server_error');
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${address.address}:${address.port}`,
    server,
    ledger: () => ledger.entriesSeen(),
    requests: () => ledger.requests(),
    inject: (rule) => faults.add(rule),
    clearFaults: () => faults.clear(),
    openGate: (gate) => behaviour.openGate(gate),
    configureCharges: (settings) => Object.assign(ledger.charges, chargeSettings(settings)),
    configureDrift: (settings) => behaviour.drift.configure(settings),
    close: () =>
      new Promise<void>((resolve) => {
        behaviour.hangUp();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

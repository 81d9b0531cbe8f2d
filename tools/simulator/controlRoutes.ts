import type { Behaviour } from './behaviour';
import { driftSettings } from './drift';
import type { FaultQueue, FaultRule } from './faults';
import { readBody, sendJson, type Routes } from './http';
import { ledgerKey, type ChargeSettings, type Ledger } from './ledger';

/** The charge API's settings a request asks for: only known fields, each a whole number of ms. */
export function chargeSettings(body: unknown): Partial<ChargeSettings> {
  const asked = (body ?? {}) as Record<string, unknown>;
  const settings: Partial<ChargeSettings> = {};
  for (const field of ['keyWindowMs', 'searchLagMs'] as const) {
    const value = asked[field];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || (value as number) < 0)
      throw new Error(`${field} must be a whole number of milliseconds`);
    settings[field] = value as number;
  }
  return settings;
}

/**
 * The simulator's own routes, for tests and operators: its health, the requests it saw and its
 * ledger (`GET /_simulator/requests`, `GET /_simulator/ledger`), faults to queue or drop
 * (`POST` / `DELETE /_simulator/faults`), gates to open (`POST /_simulator/gates/<gate>`), the
 * charge API's key window and search lag and the drifting model's drift (`PUT /_simulator/settings`),
 * and the provider's console (`GET /_simulator/console/charges/<key>`): the charge made for a
 * request, however the provider filed it, as an operator finds it by the account.
 */
export function controlRoutes(ledger: Ledger, faults: FaultQueue, behaviour: Behaviour): Routes {
  return (route) => {
    if (route === 'GET /_simulator/requests')
      return (_req, res) => sendJson(res, 200, { requests: ledger.requests() });
    if (route === 'GET /healthz') return (_req, res) => sendJson(res, 200, { ok: true });
    if (route === 'GET /_simulator/ledger')
      return (_req, res) => sendJson(res, 200, { entries: ledger.entriesSeen() });
    if (route === 'PUT /_simulator/settings') {
      return async (req, res) => {
        const body = JSON.parse(await readBody(req)) as unknown;
        const drift = driftSettings(body);
        Object.assign(ledger.charges, chargeSettings(body));
        if (drift) behaviour.drift.configure(drift);
        sendJson(res, 200, { ...ledger.charges, ...(drift ? { drift } : {}) });
      };
    }
    if (route === 'POST /_simulator/faults') {
      return async (req, res) => {
        faults.add(JSON.parse(await readBody(req)) as FaultRule);
        sendJson(res, 204, {});
      };
    }
    const consoleCharge = /^GET \/_simulator\/console\/charges\/(.+)$/.exec(route);
    if (consoleCharge) {
      return (_req, res) => {
        const entry = ledger.response(ledgerKey('charge', decodeURIComponent(consoleCharge[1]!)));
        if (entry) sendJson(res, 200, entry.response);
        else sendJson(res, 404, { error: 'no charge for this request' });
      };
    }
    const gate = /^POST \/_simulator\/gates\/([^/]+)$/.exec(route);
    if (gate) {
      return (_req, res) => {
        behaviour.openGate(decodeURIComponent(gate[1]!));
        sendJson(res, 204, {});
      };
    }
    if (route === 'DELETE /_simulator/faults') {
      return (_req, res) => {
        faults.clear();
        sendJson(res, 204, {});
      };
    }
    return undefined;
  };
}

import type { Behaviour } from './behaviour';
import type { FaultQueue, FaultRule } from './faults';
import { readBody, sendJson, type Routes } from './http';
import { ledgerKey, type Ledger } from './ledger';

/**
 * The simulator's own routes, for tests and operators: its health, the requests it saw and its
 * ledger (`GET /_simulator/requests`, `GET /_simulator/ledger`), faults to queue or drop
 * (`POST` / `DELETE /_simulator/faults`) and gates to open (`POST /_simulator/gates/<gate>`),
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

import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { withMerged, type Behaviour } from './behaviour';
import type { FaultQueue } from './faults';
import { readBody, sendJson, type Routes } from './http';
import { ledgerKey, type ChargeReportEntry, type Ledger } from './ledger';
import { providerError } from './protocols';

/**
 * The payment-like API: `POST /v1/charges`, idempotent by its required Idempotency-Key (a repeat
 * is answered from the ledger, with the first request's status and body, and counted as a
 * replay; a repeat while the first is still processed is refused with 409; a key is forgotten
 * after the key window), the status lookup by key (`GET /v1/charges/by-key/:key`): the record,
 * "still processing", or no record, and a search by key that lags its writes.
 */

export function chargeRoutes(ledger: Ledger, faults: FaultQueue, behaviour: Behaviour): Routes {
  async function createCharge(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const idempotencyKey = req.headers['idempotency-key'];
    if (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0)
      return providerError(res, 'charge', 400, 'Idempotency-Key is required');
    let body: { amountCents?: unknown; currency?: unknown; account?: unknown };
    const raw = await readBody(req);
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      return providerError(res, 'charge', 400, 'request body is not valid JSON');
    }
    const { amountCents, currency, account } = body;
    if (
      !Number.isInteger(amountCents) ||
      (amountCents as number) <= 0 ||
      typeof currency !== 'string' ||
      typeof account !== 'string'
    ) {
      return providerError(
        res,
        'charge',
        400,
        'amountCents (positive integer), currency and account are required',
      );
    }
    await behaviour.perform(
      'charge',
      req,
      res,
      {
        idempotencyKey,
        fingerprint: JSON.stringify([amountCents, currency, account]),
        body,
        bodyDigest: createHash('sha256').update(raw).digest('hex'),
      },
      () => ({
        id: `ch_${randomUUID().replace(/-/g, '')}`,
        status: 'succeeded',
        amountCents,
        currency,
        account,
        idempotencyKey,
      }),
      201,
    );
  }

  async function chargeStatus(res: ServerResponse, idempotencyKey: string): Promise<void> {
    const slot = ledgerKey('charge', idempotencyKey);
    const fault = faults.take('charge-status', { idempotencyKey });
    ledger.record({
      route: 'charge-status',
      idempotencyKey,
      at: new Date().toISOString(),
      fault: fault?.kind,
    });
    try {
      if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
      if (fault?.kind === 'fail_before')
        return providerError(res, 'charge', fault.status, 'simulated status lookup failure', {
          type: 'server_error',
        });
      const entry = ledger.filedUnderOwnId.has(slot) ? undefined : ledger.response(slot);
      if (!entry && ledger.pending.has(slot))
        return providerError(
          res,
          'charge',
          409,
          'A request with this idempotency key is still being processed',
          { type: 'processing' },
        );
      if (!entry)
        return providerError(res, 'charge', 404, 'No charge was made with this idempotency key', {
          type: 'not_found_error',
        });
      sendJson(
        res,
        200,
        fault?.kind === 'answer_with'
          ? withMerged('charge', entry.response, fault.merge)
          : entry.response,
      );
    } finally {
      // A request that registers its key only after a lookup may go on now.
      behaviour.statusLookedUp(slot);
    }
  }

  /**
   * Stripe-like search (`query=idempotency_key:'<key>'`): a list of the charges made under the
   * key, written at least the search's lag ago (its index is behind its writes).
   */
  function searchCharges(req: IncomingMessage, res: ServerResponse): void {
    const query = new URL(req.url ?? '/', 'http://simulator').searchParams.get('query') ?? '';
    const key = /^idempotency_key:'([^']+)'$/.exec(query)?.[1];
    if (!key)
      return providerError(res, 'charge', 400, "query must be idempotency_key:'<key>'", {
        type: 'invalid_request_error',
      });
    const fault = faults.take('charge-search', { idempotencyKey: key });
    ledger.record({
      route: 'charge-search',
      idempotencyKey: key,
      at: new Date().toISOString(),
      fault: fault?.kind,
    });
    if (fault?.kind === 'fail_before')
      return providerError(res, 'charge', fault.status, 'simulated search failure', {
        type: 'api_error',
      });
    sendJson(res, 200, {
      object: 'search_result',
      url: '/v1/charges/search',
      has_more: false,
      data: ledger.searchable('charge', key),
    });
  }

  /**
   * The provider's export of its charges (`format=csv`: a dashboard's download, amounts in the
   * currency's major unit as decimals; `format=jsonl`: one API object per line, amounts in minor
   * units). What an operator settles unknown attempts from.
   */
  function exportCharges(req: IncomingMessage, res: ServerResponse): void {
    const format = new URL(req.url ?? '/', 'http://simulator').searchParams.get('format') ?? 'csv';
    const entries = ledger.chargeReport();
    if (format === 'jsonl') {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
      return;
    }
    if (format !== 'csv')
      return providerError(res, 'charge', 400, 'format must be csv or jsonl', {
        type: 'invalid_request_error',
      });
    const cell = (value: string) =>
      /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
    // In the currency's major unit: its ISO 4217 exponent, as Intl knows it (JPY has none).
    const major = (entry: ChargeReportEntry) => {
      if (entry.amountCents === undefined || !entry.currency) return '';
      const digits = new Intl.NumberFormat('en', {
        style: 'currency',
        currency: entry.currency,
      }).resolvedOptions().maximumFractionDigits!;
      return (entry.amountCents / 10 ** digits).toFixed(digits);
    };
    const lines = [
      'id,idempotency_key,status,amount,currency,account,created',
      ...entries.map((entry) =>
        [
          entry.id,
          entry.idempotencyKey,
          entry.status,
          major(entry),
          entry.currency ?? '',
          entry.account ?? '',
          entry.created,
        ]
          .map(cell)
          .join(','),
      ),
    ];
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.end(`${lines.join('\r\n')}\r\n`);
  }

  return (route) => {
    if (route === 'POST /v1/charges') return createCharge;
    if (route === 'GET /v1/charges/export') return exportCharges;
    if (route === 'GET /v1/charges/search') return searchCharges;
    const status = /^GET \/v1\/charges\/by-key\/(.+)$/.exec(route);
    if (status) return (_req, res) => chargeStatus(res, decodeURIComponent(status[1]!));
    return undefined;
  };
}

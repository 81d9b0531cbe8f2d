/**
 * A provider's own export of what it did (issue 61): CSV with a header row, or JSON lines, read
 * through a small mapping that says which columns hold our idempotency key, the outcome and the
 * amount. Reading only: what a row means for our attempts is the settlement plan's business
 * (src/service/reportSettlement.ts).
 */
import { z } from 'zod';

/** Which columns (CSV header names, or JSON field paths such as `charge.amount`) hold what. */
export const reportMappingSchema = z.strictObject({
  /** Our idempotency key as the provider kept it: the attempt id. */
  key: z.string().min(1),
  /** What became of the call, in the provider's words (see `succeeded` and `failed`). */
  outcome: z.string().min(1),
  /** What was charged. */
  amount: z.string().min(1),
  /** The provider's own id of the charge: needed to record a success. */
  id: z.string().min(1),
  currency: z.string().min(1).optional(),
  account: z.string().min(1).optional(),
  /** Outcome values that mean the work was done; compared without case. */
  succeeded: z.array(z.string().min(1)).min(1).default(['succeeded']),
  /** Outcome values that mean it certainly was not. */
  failed: z.array(z.string().min(1)).min(1).default(['failed']),
  /** `minor`: amounts in the currency's smallest unit (cents); `major`: decimal (12.50). */
  amountIn: z.enum(['minor', 'major']).default('minor'),
});

export type ReportMapping = z.infer<typeof reportMappingSchema>;

export type ReportFormat = 'csv' | 'jsonl';

/** A row read: what the provider says of one key. */
export interface ReportRow {
  /** Its line in the file (1 is the first; a CSV's header is line 1). */
  line: number;
  key: string;
  outcome: 'succeeded' | 'failed';
  /** As written (a refusal may have none): turned into minor units once the currency is known. */
  amount?: string;
  providerId: string;
  currency?: string;
  account?: string;
}

/** A row that could not be read as the mapping says, and why. */
export interface UnreadableRow {
  line: number;
  key?: string;
  unreadable: string;
}

/** At most this many rows in one report: one operation stays bounded. */
export const MAX_REPORT_ROWS = 100_000;

/** Reads a report's rows; rows that cannot be read are returned as such, never dropped. */
export function readProviderReport(
  text: string,
  format: ReportFormat,
  mapping: ReportMapping,
): Array<ReportRow | UnreadableRow> {
  const records = format === 'csv' ? csvRecords(text) : jsonLines(text);
  if (records.length > MAX_REPORT_ROWS)
    throw new Error(
      `the report has ${records.length} rows; at most ${MAX_REPORT_ROWS} are read at once: split it`,
    );
  return records.map(({ line, fields, error }) =>
    error !== undefined ? { line, unreadable: error } : rowOf(line, fields, mapping),
  );
}

type Fields = (path: string) => unknown;

function rowOf(line: number, field: Fields, mapping: ReportMapping): ReportRow | UnreadableRow {
  const text = (column: string): string | undefined => {
    const value = field(column);
    if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
    if (typeof value === 'number' && Number.isFinite(value)) return String(value);
    return undefined;
  };
  const key = text(mapping.key);
  if (!key) return { line, unreadable: `no key in column ${mapping.key}` };
  const said = text(mapping.outcome);
  const is = (values: string[]) => values.some((v) => v.toLowerCase() === said?.toLowerCase());
  const outcome = is(mapping.succeeded) ? 'succeeded' : is(mapping.failed) ? 'failed' : undefined;
  if (!outcome)
    return {
      line,
      key,
      unreadable: `outcome ${JSON.stringify(said ?? '')} is none of ${[...mapping.succeeded, ...mapping.failed].join(', ')}`,
    };
  // A charge made must say what it charged; a refused one may leave the amount out.
  const amount = text(mapping.amount);
  if ((amount || outcome === 'succeeded') && !/^\d+(\.\d+)?$/.test(amount ?? ''))
    return { line, key, unreadable: `amount ${JSON.stringify(amount ?? '')} is not a number` };
  const providerId = text(mapping.id);
  if (outcome === 'succeeded' && !providerId)
    return { line, key, unreadable: `a charge made names its id in column ${mapping.id}` };
  const currency = mapping.currency ? text(mapping.currency) : undefined;
  const account = mapping.account ? text(mapping.account) : undefined;
  return {
    line,
    key,
    outcome,
    ...(amount ? { amount } : {}),
    providerId: providerId ?? '',
    ...(currency ? { currency: currency.toUpperCase() } : {}),
    ...(account ? { account } : {}),
  };
}

/**
 * An amount as written, in the currency's minor units (its ISO 4217 exponent, as the runtime's
 * Intl knows it); undefined when a `major` amount has more decimals than the currency has.
 */
export function minorUnits(
  amount: string,
  amountIn: ReportMapping['amountIn'],
  currency: string,
): number | undefined {
  const [whole, fraction = ''] = amount.split('.');
  if (amountIn === 'minor') return fraction === '' ? Number(whole) : undefined;
  let exponent: number;
  try {
    exponent = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
      .maximumFractionDigits!;
  } catch {
    // Not a currency code Intl knows ("EURO"): no amount in it can be read.
    return undefined;
  }
  if (fraction.replace(/0+$/, '').length > exponent) return undefined;
  return Number(`${whole}${fraction.padEnd(exponent, '0').slice(0, exponent)}`);
}

interface RawRecord {
  line: number;
  fields: Fields;
  error?: string;
}

function jsonLines(text: string): RawRecord[] {
  const records: RawRecord[] = [];
  text.split(/\r?\n/).forEach((source, index) => {
    if (source.trim() === '') return;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(source);
    } catch {
      records.push({ line, fields: () => undefined, error: 'not a JSON value' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      records.push({ line, fields: () => undefined, error: 'not a JSON object' });
      return;
    }
    records.push({
      line,
      fields: (path) =>
        path
          .split('.')
          .reduce<unknown>(
            (at, part) =>
              typeof at === 'object' && at !== null
                ? (at as Record<string, unknown>)[part]
                : undefined,
            value,
          ),
    });
  });
  return records;
}

/** CSV as RFC 4180 writes it: quoted fields may hold commas, quotes ("") and line breaks. */
function csvRecords(text: string): RawRecord[] {
  const rows = csvRows(text.replace(/^\uFEFF/, ''));
  const header = rows.shift();
  if (!header) return [];
  const columns = header.cells.map((cell) => cell.trim());
  return rows
    .filter((row) => row.cells.some((cell) => cell.trim() !== ''))
    .map((row) =>
      row.cells.length !== columns.length
        ? {
            line: row.line,
            fields: () => undefined,
            error: `${row.cells.length} fields where the header has ${columns.length}`,
          }
        : {
            line: row.line,
            fields: (name: string) => {
              const at = columns.indexOf(name);
              return at < 0 ? undefined : row.cells[at];
            },
          },
    );
}

function csvRows(text: string): Array<{ line: number; cells: string[] }> {
  const rows: Array<{ line: number; cells: string[] }> = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (char === '"') quoted = false;
      else {
        if (char === '\n') line++;
        cell += char;
      }
    } else if (char === '"' && cell === '') quoted = true;
    else if (char === ',') {
      cells.push(cell);
      cell = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      cells.push(cell);
      rows.push({ line: rowLine, cells });
      cells = [];
      cell = '';
      line++;
      rowLine = line;
    } else cell += char;
  }
  if (quoted) throw new Error(`the CSV ends inside a quoted field that starts on line ${rowLine}`);
  if (cell !== '' || cells.length > 0) {
    cells.push(cell);
    rows.push({ line: rowLine, cells });
  }
  return rows;
}

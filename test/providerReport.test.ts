import {
  minorUnits,
  readProviderReport,
  reportMappingSchema,
  type ReportMapping,
} from '../src/domain/providerReport';

/** Reading a provider's export as its mapping says: every row read, or said unreadable. */

const mapping = (given: Record<string, unknown>): ReportMapping =>
  reportMappingSchema.parse({
    key: 'key',
    outcome: 'status',
    amount: 'amount',
    id: 'id',
    ...given,
  });

test('a CSV export is read as RFC 4180 writes it: quoted commas, doubled quotes, line breaks inside quotes, CRLF and a byte-order mark', () => {
  const csv =
    '\uFEFFid,key,status,amount,note\r\n' +
    'ch_1,j1:1,succeeded,12.50,"a, b"\r\n' +
    'ch_2,j2:1,Charged,3,"said ""hi""\non two lines"\r\n' +
    '\r\n' +
    'ch_3,j3:1,declined,,x\r\n';
  const rows = readProviderReport(
    csv,
    'csv',
    mapping({ succeeded: ['succeeded', 'charged'], failed: ['declined'] }),
  );
  expect(rows).toEqual([
    { line: 2, key: 'j1:1', outcome: 'succeeded', amount: '12.50', providerId: 'ch_1' },
    { line: 3, key: 'j2:1', outcome: 'succeeded', amount: '3', providerId: 'ch_2' },
    { line: 6, key: 'j3:1', outcome: 'failed', providerId: 'ch_3' },
  ]);
});

test('a row that cannot be read as the mapping says is kept as unreadable with its line and why, never dropped', () => {
  const jsonl = [
    '{"c": {"key": "j1:1", "status": "refunded", "amount": 5, "id": "a"}}',
    '{"c": {"status": "succeeded"}}',
    '{"c": {"key": "j3:1", "status": "succeeded", "amount": "12,5", "id": "c"}}',
    '{"c": {"key": "j4:1", "status": "succeeded", "amount": 5}}',
    '[1, 2]',
    '{"c": ',
  ].join('\n');
  const rows = readProviderReport(
    jsonl,
    'jsonl',
    mapping({ key: 'c.key', outcome: 'c.status', amount: 'c.amount', id: 'c.id' }),
  );
  expect(rows).toEqual([
    { line: 1, key: 'j1:1', unreadable: expect.stringMatching(/outcome "refunded" is none of/) },
    { line: 2, unreadable: 'no key in column c.key' },
    { line: 3, key: 'j3:1', unreadable: 'amount "12,5" is not a number' },
    { line: 4, key: 'j4:1', unreadable: 'a charge made names its id in column c.id' },
    { line: 5, unreadable: 'not a JSON object' },
    { line: 6, unreadable: 'not a JSON value' },
  ]);
  expect(readProviderReport('id,key\nch_1,j1:1,extra\n', 'csv', mapping({}))[0]).toEqual({
    line: 2,
    unreadable: '3 fields where the header has 2',
  });
  expect(() => readProviderReport('id,key\n"open', 'csv', mapping({}))).toThrow(
    /ends inside a quoted field that starts on line 2/,
  );
});

test('amounts become minor units by the currency’s own exponent, and an amount finer than the currency allows is refused', () => {
  expect(minorUnits('12.50', 'major', 'EUR')).toBe(1250);
  expect(minorUnits('12.5', 'major', 'EUR')).toBe(1250);
  expect(minorUnits('1250', 'major', 'JPY')).toBe(1250);
  expect(minorUnits('12.345', 'major', 'EUR')).toBeUndefined();
  expect(minorUnits('1.5', 'major', 'JPY')).toBeUndefined();
  expect(minorUnits('1250', 'minor', 'EUR')).toBe(1250);
  expect(minorUnits('12.50', 'minor', 'EUR')).toBeUndefined();
});

import { canonicalJson } from '../src/domain/canonicalJson';
import { requestFingerprint } from '../src/domain/fingerprint';

test('key order and whitespace do not change the canonical form', () => {
  const a = JSON.parse('{"b": 1, "a": {"y": [1, 2, {"q": true, "p": null}], "x": "s"}}');
  const b = JSON.parse('{"a":{"x":"s","y":[1,2,{"p":null,"q":true}]},"b":1}');
  expect(canonicalJson(a)).toBe('{"a":{"x":"s","y":[1,2,{"p":null,"q":true}]},"b":1}');
  expect(canonicalJson(a)).toBe(canonicalJson(b));
});

test('numbers and strings serialise as RFC 8785 prescribes', () => {
  // Examples from RFC 8785 appendix B and §3.2.2.
  expect(canonicalJson([1e21, 1e-7, 0.000001, -0, 333333333.3333333, 9007199254740992])).toBe(
    '[1e+21,1e-7,0.000001,0,333333333.3333333,9007199254740992]',
  );
  expect(canonicalJson({ '\u20ac': 1, '\r': 2, '1': 3, '\u00f6': 4 })).toBe(
    '{"\\r":2,"1":3,"ö":4,"€":1}',
  );
  expect(canonicalJson('\u2028 \u0007')).toBe('"\u2028 \\u0007"');
  expect(() => canonicalJson(Number.NaN)).toThrow(/NaN/);
});

test('the fingerprint differs when any part of the intent differs', () => {
  const base = {
    type: 'summarize',
    input: { text: 'x' },
    providers: null,
    mode: 'exclusive' as const,
  };
  const fp = requestFingerprint(base);
  expect(fp).toMatch(/^[0-9a-f]{64}$/);
  expect(requestFingerprint({ ...base, input: { text: 'y' } })).not.toBe(fp);
  expect(requestFingerprint({ ...base, providers: ['simulator'] })).not.toBe(fp);
  expect(requestFingerprint({ ...base, mode: 'hedged' })).not.toBe(fp);
  expect(requestFingerprint({ ...base, type: 'charge' })).not.toBe(fp);
});

import { bodyShapeProblem } from '../src/api/bodyShape';
import {
  intentShapeRefusal,
  jsonShapeProblem,
  MAX_JSON_BYTES,
  MAX_JSON_DEPTH,
} from '../src/domain/jsonShape';
import { pathsWithNulCharacter } from '../src/domain/storableJson';

/** One shape check for every JSON from outside: iterative, so no depth overflows it. */
const nested = (levels: number, bottom: unknown = 'bottom'): unknown => {
  let value = bottom;
  for (let i = 0; i < levels; i++) value = i % 2 ? { a: value } : [value];
  return value;
};

test('a value nested 100,000 deep is refused for its depth, without overflowing the stack', () => {
  expect(jsonShapeProblem(nested(100_000))).toMatch(/nested deeper than 100 levels/);
  expect(intentShapeRefusal({ input: nested(100_000) })).toMatch(/^invalid-input: /);
});

test('the depth and size limits are the API’s: the body check is the same check', () => {
  expect(jsonShapeProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
  expect(jsonShapeProblem(nested(MAX_JSON_DEPTH + 1))).toMatch(/nested deeper/);
  const large = { text: 'x'.repeat(MAX_JSON_BYTES) };
  expect(jsonShapeProblem(large)).toMatch(/larger than 1048576 bytes/);
  expect(jsonShapeProblem({ text: 'x'.repeat(MAX_JSON_BYTES - 20) })).toBeUndefined();
  for (const value of [nested(MAX_JSON_DEPTH + 1), large, { k: '\ud800' }, { ok: [1, 'two'] }])
    expect(bodyShapeProblem(value)).toBe(jsonShapeProblem(value));
});

test('NUL characters are found at any depth, in document order, without overflowing the stack', () => {
  expect(pathsWithNulCharacter(nested(100_000, 'a\u0000'), 'input')).toHaveLength(1);
  expect(
    pathsWithNulCharacter({ a: 'x\u0000', '\u0000k': { b: ['ok', '\u0000'] }, c: 1 }, 'input'),
  ).toEqual(['input.a', 'input."\\u0000k"', 'input.\u0000k.b.1']);
});

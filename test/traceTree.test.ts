import { readFileSync } from 'node:fs';
import path from 'node:path';
import { renderTrace, renderTraces, type JaegerSpan, type JaegerTrace } from '../src/cli/traceTree';

/**
 * The tree `onejob jobs trace` prints, from a job's trace as Jaeger's query API answered it (a
 * test run's, cut down to the path from the create to the compare-and-swap; its spans in the
 * order Jaeger gave them, which is not the order they started in).
 */
const recorded = JSON.parse(
  readFileSync(path.join(__dirname, 'fixtures', 'jaegerJobTrace.json'), 'utf8'),
) as JaegerTrace;
const JOB = '8576888a-6cd7-4cb1-9531-882de49f5d18';

test("a recorded trace prints as a tree: each span under its parent, two spaces a level, children in the order they started, with its duration, service and the operator's attributes", () => {
  expect(renderTrace(recorded).split('\n')).toEqual([
    `trace ${recorded.traceID}  9 spans  452.0 ms  2026-12-06T17:56:43.234Z`,
    'POST /v1/jobs  73.5 ms  onejob-api',
    '  pg.query:jobs.insert-or-find onejob  4.3 ms  onejob-api',
    '  StartWorkflow:jobWorkflow  22.5 ms  onejob-api',
    '    RunWorkflow:jobWorkflow  394.0 ms  onejob-worker',
    '      StartActivity:callProvider  351.0 ms  onejob-worker',
    '        RunActivity:callProvider  101.6 ms  onejob-worker',
    `          provider call  94.4 ms  onejob-worker  provider=primary model=sim-steady attempt=${JOB}:1 outcome=succeeded cost=0.00008 USD`,
    `            compare-and-swap  26.3 ms  onejob-worker  attempt=${JOB}:1 cas=won source=provider`,
    '              pg.query:cas.swap-in-result onejob  4.3 ms  onejob-worker',
  ]);
});

const span = (
  id: string,
  name: string,
  startMs: number,
  parent: string | undefined,
  tags: Record<string, unknown> = {},
): JaegerSpan => ({
  traceID: 't',
  spanID: id,
  operationName: name,
  references: parent ? [{ refType: 'CHILD_OF', spanID: parent }] : [],
  startTime: 1_700_000_000_000_000 + startMs * 1000,
  duration: 2_500,
  tags: Object.entries(tags).map(([key, value]) => ({ key, value })),
  processID: 'p1',
});

test("a lost race names its winner, an ambiguous late call says so, an error is marked, and a span whose parent is not in the trace is a root of its own, in start order with the trace's", () => {
  const trace: JaegerTrace = {
    traceID: 'reconciler',
    processes: { p1: { serviceName: 'onejob-worker' } },
    spans: [
      span('b', 'compare-and-swap', 5, 'a', {
        'onejob.attempt_id': `${JOB}:1`,
        'onejob.cas': 'lost',
        'onejob.winner_attempt_id': `${JOB}:2`,
        'onejob.result_source': 'status-lookup',
      }),
      // Its parent's span never reached the backend.
      span('c', 'status lookup', 1, 'gone', {
        'onejob.provider': 'pay',
        'onejob.lookup': 'not_found',
      }),
      span('a', 'provider call', 0, undefined, {
        'onejob.provider': 'pay',
        'onejob.outcome': 'unknown',
        'onejob.certainty': 'ambiguous',
        'onejob.late': true,
        'onejob.error_code': 'timeout',
        error: true,
      }),
    ],
  };
  expect(renderTrace(trace).split('\n').slice(1)).toEqual([
    'provider call  2.5 ms  onejob-worker  provider=pay outcome=unknown certainty=ambiguous late code=timeout error',
    `  compare-and-swap  2.5 ms  onejob-worker  attempt=${JOB}:1 cas=lost winner=${JOB}:2 source=status-lookup`,
    'status lookup  2.5 ms  onejob-worker  provider=pay lookup=not_found',
  ]);
});

test('spans whose parents form a loop are still printed, and several traces print oldest first', () => {
  const looped: JaegerTrace = {
    traceID: 'looped',
    processes: {},
    spans: [span('x', 'one', 10, 'y'), span('y', 'two', 11, 'x')],
  };
  const earlier: JaegerTrace = {
    traceID: 'earlier',
    processes: {},
    spans: [span('z', 'GET /v1/jobs/:id', 0, undefined)],
  };
  const printed = renderTraces([looped, earlier]);
  expect(printed.split('\n').filter((line) => line.startsWith('trace '))).toEqual([
    expect.stringMatching(/^trace earlier {2}1 span {2}2\.5 ms/),
    expect.stringMatching(/^trace looped {2}2 spans {2}3\.5 ms/),
  ]);
  expect(printed).toContain('one  2.5 ms  p1\n  two  2.5 ms  p1');
});

import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { harness } from './harness';
import { pathProblems } from './replay/paths';

/**
 * Every recorded history (test/replay/histories, re-recorded by `npm run replay:record`) must
 * replay against the current workflow code: a change that would break running jobs fails here.
 */
const HISTORIES_DIR = path.join(__dirname, 'replay', 'histories');
const histories = readdirSync(HISTORIES_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({
    name: file.replace(/\.json$/, ''),
    history: historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8'))),
  }));

beforeAll(() => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed by an earlier file
  }
});

test('there is a recorded history for every scenario', () => {
  expect(histories.map((h) => h.name).sort()).toEqual(
    [
      'cancel',
      'continue-as-new-first-run',
      'continue-as-new-last-run',
      'admission-update',
      'user-try-again',
      'status-lookup-success',
      'contract-violation-after-effect',
      'definite-failure-then-fallback',
      'happy-path',
      'hedged-reverse-order',
      'temporal-cancel',
      'timeout-unknown-late-success',
      'unknown-operator-resolve',
    ].sort(),
  );
});

test.each(histories.map((h) => [h.name, h.history] as const))(
  'the %s history took the path its name says',
  (name, history) => {
    expect(pathProblems(name, history)).toEqual([]);
  },
);

test('a history that took another path than its name says is refused', () => {
  const failover = histories.find((h) => h.name === 'definite-failure-then-fallback')!;
  expect(pathProblems('happy-path', failover.history)).toEqual([
    'one provider call',
    'the job succeeded with attempt 1',
  ]);
  const lateSuccess = histories.find((h) => h.name === 'timeout-unknown-late-success')!;
  expect(pathProblems('status-lookup-success', lateSuccess.history)).toEqual([
    'the only call ended unknown',
  ]);
});

test.each(histories.map((h) => [h.name, h.history] as const))(
  'the %s history replays against the current workflow code',
  async (name, history) => {
    await Worker.runReplayHistory(
      { workflowBundle: { codePath: harness().workflowBundlePath } },
      history,
      `replay-${name}`,
    );
  },
);

test('a deliberately non-deterministic change is caught by replay', async () => {
  const changed = await bundleWorkflowCode({
    workflowsPath: path.join(__dirname, 'replay', 'changedWorkflow.ts'),
    logger: new DefaultLogger('WARN'),
  });
  const happy = histories.find((h) => h.name === 'happy-path')!;
  await expect(
    Worker.runReplayHistory({ workflowBundle: changed }, happy.history, 'replay-changed'),
  ).rejects.toBeInstanceOf(DeterminismViolationError);
});

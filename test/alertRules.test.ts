import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { obtainDebianProgram, PROMTOOL } from '../tools/stack/debianPackages';
import { ROOT } from './support/harness';

/**
 * The alert rules operators load (deploy/prometheus/onejob-alerts.yml) are valid, fire on the
 * series they are for and stay quiet on others (promtool's unit tests), and name only metrics
 * onejob exports.
 */
const RULES = path.join(ROOT, 'deploy', 'prometheus');
const run = promisify(execFile);

test('the alert rules pass promtool’s check and every unit test of onejob-alerts.test.yml', async () => {
  const promtool = await obtainDebianProgram(PROMTOOL, () => undefined);
  const checked = await run(promtool, ['check', 'rules', 'onejob-alerts.yml'], { cwd: RULES });
  expect(checked.stdout).toMatch(/SUCCESS: \d+ rules found/);
  // promtool exits non-zero on a failed unit test, which rejects with its output.
  const tested = await run(promtool, ['test', 'rules', 'onejob-alerts.test.yml'], { cwd: RULES });
  expect(tested.stdout).toMatch(/SUCCESS/);
});

test('every metric an alert reads is one onejob exports, and every alert is unit-tested and has a runbook line', () => {
  const rules = readFileSync(path.join(RULES, 'onejob-alerts.yml'), 'utf8');
  const exported = readdirSync(path.join(ROOT, 'src', 'telemetry'))
    .map((file) => readFileSync(path.join(ROOT, 'src', 'telemetry', file), 'utf8'))
    .join('\n');
  const read = new Set(
    [...rules.matchAll(/\b(onejob_[a-z_]+)/g)].map(([, name]) =>
      name!.replace(/_(bucket|sum|count)$/, ''),
    ),
  );
  expect([...read].filter((name) => !exported.includes(`'${name}'`))).toEqual([]);
  const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map(([, name]) => name!);
  const tests = readFileSync(path.join(RULES, 'onejob-alerts.test.yml'), 'utf8');
  expect(alerts.filter((alert) => !tests.includes(`alertname: ${alert}`))).toEqual([]);
  const runbook = readFileSync(path.join(ROOT, 'docs', 'operators.md'), 'utf8');
  expect(alerts.filter((alert) => !runbook.includes(`\`${alert}\``))).toEqual([]);
});

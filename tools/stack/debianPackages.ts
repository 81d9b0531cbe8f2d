import { spawn } from 'node:child_process';
import { isExecutable } from './goInstall';

/** A program the tests take from Debian's packages (Chromium for the Web UI, nginx, promtool). */
export interface DebianProgram {
  /** Where Debian installs it. */
  path: string;
  /** Packages that provide it, tried in order. */
  packages: string[];
  /** An environment variable that names another binary to use instead. */
  overrideEnv: string;
  /** Leave out the packages it recommends (a daemon, say, that the tests have no use for). */
  noRecommends?: true;
}

export const CHROMIUM: DebianProgram = {
  path: '/usr/bin/chromium',
  packages: ['chromium'],
  overrideEnv: 'CHROMIUM_PATH',
};
/** The schema snapshot's dump (test/schemaSnapshot.test.ts): the client of Debian's PostgreSQL. */
export const PG_DUMP: DebianProgram = {
  path: '/usr/bin/pg_dump',
  packages: ['postgresql-client'],
  overrideEnv: 'PG_DUMP_PATH',
};
/** The alert rules' checker and unit tests (test/alertRules.test.ts): Debian's Prometheus. */
export const PROMTOOL: DebianProgram = {
  path: '/usr/bin/promtool',
  packages: ['prometheus'],
  overrideEnv: 'PROMTOOL_PATH',
  noRecommends: true,
};
export const NGINX: DebianProgram = {
  path: '/usr/sbin/nginx',
  packages: ['nginx-light', 'nginx'],
  overrideEnv: 'NGINX_PATH',
};

function run(command: string, args: string[], log: (line: string) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    const keep = (chunk: Buffer): void => void (tail = (tail + chunk.toString()).slice(-2_000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', () => resolve(false));
    child.on('exit', (code) => {
      if (code !== 0) log(`${command} ${args.join(' ')} failed (exit ${code}):\n${tail}`);
      resolve(code === 0);
    });
  });
}

let aptUpdated: Promise<boolean> | undefined;

/**
 * The program's path: the override, or Debian's binary, installed with apt-get when it is
 * missing and we may (root, with apt-get). Otherwise a clear error saying how to get it.
 */
export async function obtainDebianProgram(
  program: DebianProgram,
  log: (line: string) => void = console.log,
): Promise<string> {
  const override = process.env[program.overrideEnv];
  if (override) {
    if (!isExecutable(override))
      throw new Error(`${program.overrideEnv}=${override} is not an executable file`);
    return override;
  }
  if (isExecutable(program.path)) return program.path;
  const canInstall = process.getuid?.() === 0 && isExecutable('/usr/bin/apt-get');
  if (!canInstall) {
    throw new Error(
      `${program.path} is missing. Install it (apt-get install ${program.packages[0]}) or set ${program.overrideEnv}.`,
    );
  }
  log(`installing ${program.packages.join(' or ')} from Debian's packages (first time only)…`);
  aptUpdated ??= run('apt-get', ['update', '-q'], log);
  await aptUpdated;
  for (const pkg of program.packages) {
    const flags = [
      'install',
      '-y',
      '-q',
      ...(program.noRecommends ? ['--no-install-recommends'] : []),
    ];
    if ((await run('apt-get', [...flags, pkg], log)) && isExecutable(program.path)) {
      log(`installed ${pkg} → ${program.path}`);
      return program.path;
    }
  }
  throw new Error(
    `could not install ${program.packages.join(' or ')} with apt-get; install it by hand or set ${program.overrideEnv}.`,
  );
}

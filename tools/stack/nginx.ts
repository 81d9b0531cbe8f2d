import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/domain/packageRoot';
import { isPortFree, sleep, spawnGuarded, type GuardedProcess } from './processes';

export const NGINX_TEMPLATE = path.join(
  PACKAGE_ROOT,
  'deploy',
  'nginx',
  'templates',
  'onejob.conf.template',
);

/** Fills `${NAME}` the way envsubst does; anything else (nginx's own `$vars`) is left alone. */
export function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\$\{([A-Z0-9_]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

export interface LoadBalancer {
  url: string;
  process: GuardedProcess;
  stop(): Promise<void>;
}

/**
 * Runs Debian's nginx in the foreground with the repository's template, in front of the given
 * API addresses, under a guardian (no orphan if we die).
 */
export async function startNginx(options: {
  dir: string;
  port: number;
  upstreams: string[];
  balance: 'hash' | 'round-robin';
  /**
   * The template's per-address limit on the API. Default: far above any test's traffic, which
   * all comes from one address and measures the API, not this guard.
   */
  rateLimit?: { rate: string; burst: number };
  nginxPath?: string;
}): Promise<LoadBalancer> {
  mkdirSync(options.dir, { recursive: true });
  const site = renderTemplate(readFileSync(NGINX_TEMPLATE, 'utf8'), {
    ONEJOB_API_UPSTREAMS: options.upstreams.map((u) => `server ${u};`).join(' '),
    ONEJOB_LB_BALANCE: options.balance === 'hash' ? 'hash $http_idempotency_key consistent;' : '',
    ONEJOB_LB_LISTEN: `127.0.0.1:${options.port}`,
    ONEJOB_LB_RATE: options.rateLimit?.rate ?? '100000r/s',
    ONEJOB_LB_BURST: String(options.rateLimit?.burst ?? 100_000),
  });
  const sitePath = path.join(options.dir, 'onejob.conf');
  writeFileSync(sitePath, site);
  const temp = (name: string) => `${name}_temp_path ${path.join(options.dir, name)};`;
  const main = [
    'daemon off;',
    'worker_processes 1;',
    `pid ${path.join(options.dir, 'nginx.pid')};`,
    `error_log ${path.join(options.dir, 'error.log')} warn;`,
    'events { worker_connections 1024; }',
    'http {',
    `  access_log ${path.join(options.dir, 'access.log')};`,
    `  ${temp('client_body')} ${temp('proxy')} ${temp('fastcgi')} ${temp('uwsgi')} ${temp('scgi')}`,
    `  include ${sitePath};`,
    '}',
  ].join('\n');
  const confPath = path.join(options.dir, 'nginx.conf');
  writeFileSync(confPath, main);
  const proc = spawnGuarded(
    options.nginxPath ?? '/usr/sbin/nginx',
    ['-c', confPath, '-p', options.dir],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  const deadline = Date.now() + 10_000;
  while (await isPortFree(options.port)) {
    if (Date.now() > deadline || proc.child.exitCode !== null) {
      await proc.stop();
      throw new Error(`nginx did not start; see ${path.join(options.dir, 'error.log')}`);
    }
    await sleep(50);
  }
  return { url: `http://127.0.0.1:${options.port}`, process: proc, stop: () => proc.stop() };
}

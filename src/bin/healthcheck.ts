import { apiAddress, workerAddresses } from '../config';
import { hostAndPort } from '../settings/read';

/**
 * The container's health check (Dockerfile HEALTHCHECK, docker-compose.yml): one image runs the
 * API or the worker, so this asks the API's /readyz and then the worker's, and the first that
 * answers decides: healthy only on 200. Exits 0 or 1 with one line, as Docker keeps it.
 */
const ANSWER_WITHIN_MS = 4_000;

/** Where to ask from inside the container: a wildcard listening address means loopback. */
function loopbackFor(host: string): string {
  return ['0.0.0.0', '::', ''].includes(host)
    ? '127.0.0.1'
    : host.includes(':')
      ? `[${host}]`
      : host;
}

function targets(env: NodeJS.ProcessEnv): string[] {
  const { host, port } = apiAddress(env);
  const api = `http://${loopbackFor(host)}:${port}/readyz`;
  const address = workerAddresses(env).healthAddress;
  if (address === 'off') return [api];
  const worker = hostAndPort(address, 'ONEJOB_WORKER_HEALTH_ADDRESS');
  return [api, `http://${loopbackFor(worker.host)}:${worker.port}/readyz`];
}

async function main(): Promise<number> {
  for (const url of targets(process.env)) {
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
    } catch (error) {
      // Nothing listens there: this container runs the other service.
      if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') continue;
      console.log(`${url}: no answer (${(error as Error).message})`);
      return 1;
    }
    const body = await response.text();
    console.log(`${url}: ${response.status} ${body}`);
    return response.ok ? 0 : 1;
  }
  console.log('neither the API nor the worker answers here');
  return 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.log(`onejob healthcheck: ${(error as Error).message}`);
    process.exit(1);
  },
);

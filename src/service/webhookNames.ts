import { promises as dns } from 'node:dns';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { WebhookNameSettings } from '../domain/webhooks';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Why a name has no address: its `code` is the one Node's own lookup uses. */
function lookupError(hostname: string, code: string, message: string): Error {
  return Object.assign(new Error(`${hostname}: ${message}`), { code, hostname });
}

/** The hosts file's names and their addresses (only what it maps; the rest goes to DNS). */
async function readHosts(path: string): Promise<Map<string, ResolvedAddress[]>> {
  const names = new Map<string, ResolvedAddress[]>();
  const text = await readFile(path, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/);
    const family = address ? isIP(address) : 0;
    if (family !== 4 && family !== 6) continue;
    for (const alias of aliases) {
      const name = alias.toLowerCase();
      names.set(name, [...(names.get(name) ?? []), { address: address!, family }]);
    }
  }
  return names;
}

/**
 * Resolves the names owners choose for their receivers, with a bound and off libuv's thread
 * pool. Node's `dns.lookup` runs getaddrinfo on that pool of four threads, with no timeout: a
 * name server that never answers would hold them, and with them the file reads and lookups of
 * everything else in the process. Here the hosts file is read first, then DNS is asked through
 * c-ares (its own sockets, on the event loop) for A and AAAA at once, and the whole gives up
 * after `timeoutMs`.
 */
export class WebhookNames {
  private hosts: Promise<Map<string, ResolvedAddress[]>> | undefined;

  constructor(
    private readonly settings: WebhookNameSettings,
    private readonly hostsPath = '/etc/hosts',
  ) {}

  /** A resolver of one name's own, so that giving up on it cancels no other name's queries. */
  private resolver(): dns.Resolver {
    // Two tries, each given half the time: c-ares stops on its own inside the bound.
    const resolver = new dns.Resolver({
      timeout: Math.max(1, Math.floor(this.settings.timeoutMs / 2)),
      tries: 2,
    });
    if (this.settings.servers && this.settings.servers.length > 0)
      resolver.setServers(this.settings.servers);
    return resolver;
  }

  /** Every address of `hostname` (an IP address is its own), or an error saying why none. */
  async resolve(hostname: string): Promise<ResolvedAddress[]> {
    const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const family = isIP(host);
    if (family === 4 || family === 6) return [{ address: host, family }];
    this.hosts ??= readHosts(this.hostsPath);
    const listed = (await this.hosts).get(host);
    if (listed) return listed;
    const resolver = this.resolver();
    let timer: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        resolver.cancel();
        reject(
          lookupError(
            host,
            'ETIMEOUT',
            `no name server answered within ${this.settings.timeoutMs} ms`,
          ),
        );
      }, this.settings.timeoutMs);
    });
    try {
      const [v4, v6] = await Promise.race([
        Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]),
        outOfTime,
      ]);
      const found: ResolvedAddress[] = [
        ...(v4.status === 'fulfilled'
          ? v4.value.map((address) => ({ address, family: 4 as const }))
          : []),
        ...(v6.status === 'fulfilled'
          ? v6.value.map((address) => ({ address, family: 6 as const }))
          : []),
      ];
      if (found.length > 0) return found;
      const why = [v4, v6].find((r): r is PromiseRejectedResult => r.status === 'rejected');
      const code = (why?.reason as { code?: string } | undefined)?.code ?? 'ENOTFOUND';
      throw lookupError(
        host,
        code === 'ENODATA' ? 'ENOTFOUND' : code,
        code === 'ETIMEOUT' ? 'no name server answered in time' : 'the name has no address',
      );
    } finally {
      clearTimeout(timer);
    }
  }
}

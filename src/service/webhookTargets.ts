import type { LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { WebhookNames } from './webhookNames';

/**
 * Where webhooks may not go unless the operator says so: loopback, private, link-local (cloud
 * metadata services live there), carrier-grade NAT, benchmarking, multicast and reserved
 * networks. An owner's endpoint is a URL of the owner's choosing, and the worker that POSTs to
 * it sits inside the deployment's network: without this, any owner could make it call the
 * database, Temporal or a metadata service.
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local (deprecated, still routed inside some networks) and local-use NAT64.
  ['fec0::', 10],
  ['64:ff9b:1::', 48],
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

/** An IPv6 address's eight 16-bit groups (a dotted IPv4 tail taken as the last two). */
function ipv6Groups(address: string): number[] {
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted
    ? `${dotted[1]}${((+dotted[2]! << 8) | +dotted[3]!).toString(16)}:${((+dotted[4]! << 8) | +dotted[5]!).toString(16)}`
    : address;
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const dottedOf = (high: number, low: number): string =>
  [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');

/**
 * The IPv4 address an IPv6 one carries to an IPv4 host, where it does: IPv4-mapped (::ffff:0:0/96)
 * and IPv4-compatible (::/96), NAT64's well-known prefix (64:ff9b::/96, which reaches
 * 169.254.169.254 from an IPv6-only network) and 6to4 (2002::/16).
 */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || (g[5] === 0 && (g[6] !== 0 || g[7]! > 1))))
    return dottedOf(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dottedOf(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dottedOf(g[1]!, g[2]!);
  return undefined;
}

/** Whether an IP address is on an internal network (an IPv6 one carrying IPv4 by that IPv4). */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return INTERNAL.check(address, 'ipv4');
  const carried = embeddedIpv4(address);
  return carried === undefined ? INTERNAL.check(address, 'ipv6') : INTERNAL.check(carried, 'ipv4');
}

/**
 * Why a host may not be called, or undefined when it may: its addresses, as DNS gives them now.
 * The answer never says which address a name resolves to: an owner reads it, and the
 * deployment's inner addresses are none of its business.
 */
export async function internalTargetOf(
  hostname: string,
  names: WebhookNames,
): Promise<string | undefined> {
  const host = hostname.replace(/^\[|\]$/g, '');
  // A name that does not resolve now is no internal target; its tries will say why.
  const addresses = await names.resolve(host).catch(() => []);
  const internal = addresses.find((entry) => isInternalAddress(entry.address));
  if (internal === undefined) return undefined;
  return isIP(host)
    ? `${hostname} is an internal address`
    : `${hostname} resolves to an internal address`;
}

/**
 * The lookup of outgoing webhook connections: through `names` (bounded, off the thread pool),
 * refusing internal addresses unless they are allowed. The connection uses the address checked
 * here, so a name that resolves elsewhere a moment later changes nothing.
 */
export function webhookLookup(names: WebhookNames, allowInternal: boolean): LookupFunction {
  return (hostname, options, callback) => {
    names.resolve(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses: LookupAddress[] = found.filter((a) => !wanted || a.family === wanted);
        if (!allowInternal && addresses.some((entry) => isInternalAddress(entry.address)))
          return callback(
            Object.assign(
              // Kept with the try, which the owner reads: which address is not said.
              new Error(`${hostname} resolves to an internal address`),
              { code: 'EINTERNALADDRESS' },
            ),
            '',
            0,
          );
        if (addresses.length === 0)
          return callback(
            Object.assign(new Error(`${hostname}: no address of the family asked for`), {
              code: 'ENOTFOUND',
            }),
            '',
            0,
          );
        if (options.all)
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        return callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}

import { lookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

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
  ['ff00::', 8],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address is on an internal network (an IPv4-mapped IPv6 one by its IPv4 part). */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return INTERNAL.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return false;
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why a host may not be called, or undefined when it may: its addresses, as DNS gives them now. */
export async function internalTargetOf(hostname: string): Promise<string | undefined> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve) =>
        lookup(host, { all: true }, (error, found) =>
          // A name that does not resolve now is no internal target; its tries will say why.
          resolve(error ? [] : found.map((entry) => entry.address)),
        ),
      );
  const internal = addresses.find(isInternalAddress);
  return (
    internal && `${hostname} is ${internal === host ? '' : `${internal}, `}an internal address`
  );
}

/**
 * A DNS lookup for outgoing connections that refuses internal addresses. The connection uses
 * the address checked here, so a name that resolves elsewhere a moment later changes nothing.
 */
export const externalOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true } as LookupAllOptions, (error, found) => {
    if (error) return callback(error, '', 0);
    const addresses = found as LookupAddress[];
    const internal = addresses.find((entry) => isInternalAddress(entry.address));
    if (internal)
      return callback(
        Object.assign(
          new Error(`${hostname} resolves to ${internal.address}, an internal address`),
          {
            code: 'EINTERNALADDRESS',
          },
        ),
        '',
        0,
      );
    if ((options as { all?: boolean }).all)
      return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    return callback(null, first.address, first.family);
  });
};

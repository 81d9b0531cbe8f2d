import type { LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import type { WebhookNames } from './webhookNames';

/**
 * Where webhooks may not go unless the operator says so. An owner's endpoint is a URL of the
 * owner's choosing, and the worker that POSTs to it sits inside the deployment's network:
 * without this, any owner could make it call the database, Temporal or a metadata service.
 * IPv4: loopback, private, link-local (cloud metadata services live there), carrier-grade NAT,
 * benchmarking, documentation, IETF protocol assignments, the deprecated 6to4 relay anycast,
 * multicast, reserved and broadcast (IANA's IPv4 special-purpose registry, less what is a
 * public service such as AS112).
 */
const INTERNAL_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  // Multicast (224/4), reserved (240/4) and the broadcast address, together.
  ['224.0.0.0', 3],
] as const)
  INTERNAL_V4.addSubnet(network, prefix, 'ipv4');
// IPv6 apart (a BlockList matches IPv4 addresses against its IPv6 rules too, as ::ffff:a.b.c.d):
// whatever is outside global unicast (2000::/3) is internal: loopback, unspecified,
// discard-only (100::/64), local-use NAT64, SRv6 SIDs (5f00::/16), unique local, link-local,
// site-local, multicast. Inside it: IETF protocol assignments (2001::/23: Teredo, which carries
// an obfuscated IPv4 address of either kind, benchmarking, ORCHIDv2), and both documentation
// prefixes. Forms that carry an IPv4 address are judged by that address (embeddedIpv4).
const INTERNAL_V6 = new BlockList();
for (const [network, prefix] of [
  ['::', 3],
  ['4000::', 2],
  ['8000::', 1],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
] as const)
  INTERNAL_V6.addSubnet(network, prefix, 'ipv6');

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
 * and IPv4-compatible (::/96), SIIT's IPv4-translated (::ffff:0:0:0/96), NAT64's well-known
 * prefix (64:ff9b::/96, which reaches 169.254.169.254 from an IPv6-only network) and 6to4
 * (2002::/16). A network-specific NAT64 or SIIT prefix, or an explicit address mapping, is the
 * deployment's own and cannot be known here: its operator keeps it out of the webhooks' way.
 */
function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && (g[5] === 0xffff || (g[5] === 0 && (g[6] !== 0 || g[7]! > 1))))
    return dottedOf(g[6]!, g[7]!);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return dottedOf(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return dottedOf(g[6]!, g[7]!);
  if (g[0] === 0x2002) return dottedOf(g[1]!, g[2]!);
  return undefined;
}

/** Whether an IP address is on an internal network (an IPv6 one carrying IPv4 by that IPv4). */
export function isInternalAddress(given: string): boolean {
  // A zone id (fe80::1%eth0) names an interface, not another address.
  const address = given.replace(/%.*$/, '');
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return INTERNAL_V4.check(address, 'ipv4');
  const carried = embeddedIpv4(address);
  return carried === undefined
    ? INTERNAL_V6.check(address, 'ipv6')
    : INTERNAL_V4.check(carried, 'ipv4');
}

/** Internal hosts and ranges an operator lets webhooks reach (ONEJOB_WEBHOOK_ALLOWED_TARGETS). */
export interface AllowedTargets {
  /** Host names, lower case: whatever they resolve to may be called. */
  names: readonly string[];
  /** CIDR ranges (an address alone as /32 or /128): a resolved address inside may be called. */
  ranges: readonly string[];
}

const NOTHING_ALLOWED: AllowedTargets = { names: [], ranges: [] };

/** Why `name` (a URL's host, not an IP address) is no host name, or undefined when it is one. */
export function hostNameProblem(name: string): string | undefined {
  // One spelling per host: the allow-list and TLS compare names as written.
  if (name.endsWith('.')) return `${name} has a trailing dot: write the host name without it`;
  if (name.length > 253) return 'the host name is longer than 253 characters';
  const labels = name.split('.');
  if (labels.some((label) => label.length > 63))
    return 'the host name has a label longer than 63 characters';
  if (!labels.every((label) => /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/.test(label)))
    return `${name} is not a host name (letters, digits, hyphens and underscores between dots, no hyphen at either end of a label)`;
  return undefined;
}

/** The longest URL an endpoint keeps (the database holds it to that too). */
export const WEBHOOK_URL_MAX_CHARS = 2000;

/**
 * Why a webhook URL (`given`, already parsed as an http or https `url`) cannot be registered,
 * or undefined. Names are checked as the URL parser left them (lower case, IDNs as punycode);
 * what is kept and called is the parser's `href`.
 */
export function webhookUrlProblem(given: string, url: URL): string | undefined {
  // The parser would drop some and encode others; the database refuses a NUL outright.
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  if (/[\s\u0000-\u001f\u007f]/.test(given))
    return 'it has spaces or control characters; percent-encode what the URL needs of them';
  if (url.href.length > WEBHOOK_URL_MAX_CHARS)
    return `it is longer than ${WEBHOOK_URL_MAX_CHARS} characters as it is sent (percent-encoded, IDNs as punycode)`;
  if (url.username !== '' || url.password !== '')
    return 'a user name or password in the URL would be stored with the endpoint and sent with every event; leave them out (receivers verify events by their signature)';
  if (url.port === '0') return 'port 0 is no port a receiver listens on';
  const host = url.hostname;
  if (host.startsWith('[') || isIP(host) !== 0) return undefined;
  return hostNameProblem(host);
}

/**
 * ONEJOB_WEBHOOK_ALLOWED_TARGETS: comma-separated host names, IP addresses and CIDR ranges.
 * A bad entry is a one-line error naming it.
 */
export function parseAllowedTargets(raw: string, variable: string): AllowedTargets {
  if (raw.trim() === '') return NOTHING_ALLOWED;
  const names: string[] = [];
  const ranges: string[] = [];
  for (const given of raw.split(',')) {
    const entry = given.trim().toLowerCase();
    const bad = (why: string) =>
      new Error(
        `${variable}: "${given.trim()}" ${why}; list host names, IP addresses and CIDR ranges (10.0.0.0/8, fd00::/8), comma-separated`,
      );
    if (entry === '')
      throw new Error(
        `${variable} has an empty entry; list host names, IP addresses and CIDR ranges, comma-separated`,
      );
    const [address = '', prefixText, ...more] = entry.split('/');
    const family = isIP(address);
    if (family !== 0) {
      const widest = family === 4 ? 32 : 128;
      if (more.length > 0 || (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)))
        throw bad('is not a CIDR range');
      const prefix = prefixText === undefined ? widest : Number(prefixText);
      if (prefix > widest) throw bad(`has a prefix longer than ${widest} bits`);
      ranges.push(`${address}/${prefix}`);
      continue;
    }
    const problem = hostNameProblem(entry);
    if (problem !== undefined || prefixText !== undefined)
      throw bad('is neither a host name nor an IP address or CIDR range');
    names.push(entry);
  }
  return { names, ranges };
}

/**
 * Where this process's webhooks may go: public addresses always; internal ones when the
 * operator allows them all (ONEJOB_WEBHOOK_INTERNAL_TARGETS=allow), or by name or range
 * (ONEJOB_WEBHOOK_ALLOWED_TARGETS) — a name by the name the URL gives, a range by the address
 * the name resolves to at that moment.
 */
export class WebhookTargetPolicy {
  private readonly names: ReadonlySet<string>;
  // One list per family: a BlockList matches IPv4 addresses against its IPv6 rules too.
  private readonly ranges = { ipv4: new BlockList(), ipv6: new BlockList() };

  constructor(
    readonly allowInternal: boolean,
    allowed: AllowedTargets = NOTHING_ALLOWED,
  ) {
    this.names = new Set(allowed.names);
    for (const range of allowed.ranges) {
      const [address = '', prefix = ''] = range.split('/');
      const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      this.ranges[family].addSubnet(address, Number(prefix), family);
    }
  }

  /** Whether `host` (a URL's host) is one the operator named. */
  namesHost(host: string): boolean {
    return this.names.has(bare(host).toLowerCase());
  }

  /** Whether a receiver reached as `host` at `address` may be called. */
  permits(host: string, address: string): boolean {
    if (this.allowInternal || !isInternalAddress(address)) return true;
    if (this.namesHost(host)) return true;
    const plain = address.replace(/%.*$/, '');
    const family = isIP(plain);
    const carried = family === 6 ? embeddedIpv4(plain) : undefined;
    return (
      (family === 4 && this.ranges.ipv4.check(plain, 'ipv4')) ||
      (family === 6 && this.ranges.ipv6.check(plain, 'ipv6')) ||
      (carried !== undefined && this.ranges.ipv4.check(carried, 'ipv4'))
    );
  }
}

const bare = (host: string): string => host.replace(/^\[|\]$/g, '');

/**
 * Why a host may not be called, or undefined when it may: its addresses, as DNS gives them now.
 * The answer never says which address a name resolves to: an owner reads it, and the
 * deployment's inner addresses are none of its business.
 */
export async function internalTargetOf(
  hostname: string,
  names: WebhookNames,
  policy: WebhookTargetPolicy,
): Promise<string | undefined> {
  if (policy.allowInternal) return undefined;
  const host = bare(hostname);
  // A name that does not resolve now is no internal target; its tries will say why.
  const addresses = await names.resolve(host).catch(() => []);
  if (addresses.every((entry) => policy.permits(host, entry.address))) return undefined;
  return isIP(host)
    ? `${hostname} is an internal address`
    : `${hostname} resolves to an internal address`;
}

/**
 * The lookup of outgoing webhook connections: through `names` (bounded, off the thread pool),
 * refusing internal addresses `policy` does not let through. The connection uses the address
 * checked here, so a name that resolves elsewhere a moment later changes nothing. `reached` is
 * told whether the addresses found are internal ones.
 */
export function webhookLookup(
  names: WebhookNames,
  policy: WebhookTargetPolicy,
  reached?: (internal: boolean) => void,
): LookupFunction {
  return (hostname, options, callback) => {
    names.resolve(hostname).then(
      (found) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses: LookupAddress[] = found.filter((a) => !wanted || a.family === wanted);
        reached?.(addresses.some((entry) => isInternalAddress(entry.address)));
        if (addresses.some((entry) => !policy.permits(hostname, entry.address)))
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

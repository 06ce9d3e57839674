/**
 * Outbound safety of webhook URLs (SSRF): https only unless the operator allows http; the host
 * must resolve to public unicast addresses only, unless an address is in the operator's allow
 * list (INVOICING_WEBHOOK_ALLOW_PRIVATE). The check runs twice: when an endpoint is saved
 * (a clear 400) and on every connection, on the address actually connected to (a custom
 * `lookup`), so a DNS answer that changes after the first check (rebinding) gains nothing.
 * A refusal names the rule ("the host resolves to a private address"), never the address: the
 * caller must not learn what an internal name resolves to.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { HostResolver } from './host-resolver.js';

export interface UrlPolicy {
  allowHttp: boolean;
  /** Addresses or CIDRs that may be reached although not public. */
  allowPrivate: readonly string[];
}

export class UnsafeUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeUrlError';
  }
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function allowedBy(addr: Parsed, allow: readonly string[]): boolean {
  for (const entry of allow) {
    try {
      const [range, bits] = entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.process(entry), entry.includes(':') ? 128 : 32];
      const normalized = range.kind() === 'ipv6' && (range as ipaddr.IPv6).isIPv4MappedAddress() ? (range as ipaddr.IPv6).toIPv4Address() : range;
      if (normalized.kind() === addr.kind() && addr.match(normalized as never, Number(bits))) return true;
    } catch {
      // Entries were validated at start-up; a bad one matches nothing.
    }
  }
  return false;
}

/** The rule an address breaks, as `details` names it: the kind of address, never the address. */
const RANGE_RULES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  rfc6052: 'an IPv6 address that embeds an IPv4 address',
  rfc6145: 'an IPv6 address that embeds an IPv4 address',
  '6to4': 'an IPv6 address that embeds an IPv4 address',
  teredo: 'an IPv6 address that embeds an IPv4 address',
};

/** ::/96, IPv4-compatible IPv6 (deprecated by RFC 4291): `::a.b.c.d` may reach an IPv4 host. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * Null when `address` may be connected to; otherwise the rule it breaks ("a private address").
 * IPv4-mapped addresses (::ffff:a.b.c.d) are judged as the IPv4 address they carry.
 */
export function refusedAddress(address: string, policy: Pick<UrlPolicy, 'allowPrivate'>): string | null {
  let addr: Parsed;
  try {
    addr = ipaddr.process(address);
  } catch {
    return 'not an IP address';
  }
  if (allowedBy(addr, policy.allowPrivate)) return null;
  if (addr.kind() === 'ipv6' && addr.match(IPV4_COMPATIBLE as never)) return 'an IPv4-compatible IPv6 address (::/96)';
  const range = addr.range();
  if (range === 'unicast') return null;
  return RANGE_RULES[range] ?? 'a reserved address';
}

const MAX_URL = 2048;

/** The URL's form: scheme, no credentials, a host. Throws UnsafeUrlError with the reason. */
export function checkUrlForm(raw: string, policy: UrlPolicy): URL {
  if (raw.length > MAX_URL) throw new UnsafeUrlError(`the URL is longer than ${MAX_URL} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('not an absolute URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new UnsafeUrlError(policy.allowHttp ? 'the scheme must be https or http' : 'the scheme must be https (plain http is not allowed by the operator)');
  }
  if (url.username || url.password) throw new UnsafeUrlError('credentials in the URL are not allowed');
  if (!url.hostname) throw new UnsafeUrlError('the URL has no host');
  return url;
}

function literalHost(url: URL): string | null {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return net.isIP(host) ? host : null;
}

/** The refusal of a host that resolves to (or is) a refused address: the rule, never the address. */
function refusal(rule: string, literal: boolean): UnsafeUrlError {
  return new UnsafeUrlError(`${literal ? 'the host is' : 'the host resolves to'} ${rule} (not allowed for webhooks)`);
}

/**
 * Saving an endpoint: the form, then the addresses the host resolves to now, through the bounded
 * resolver. A host that does not resolve at the moment, or not within the resolver's time, is
 * accepted (DNS may be down); every delivery checks again.
 */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy, resolver: HostResolver): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  const literal = literalHost(url);
  const addresses = literal
    ? [literal]
    : await resolver.resolve(url.hostname).then(
        (list) => list.map((a) => a.address),
        () => [] as string[],
      );
  for (const address of addresses) {
    const rule = refusedAddress(address, policy);
    if (rule) throw refusal(rule, literal !== null);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses disallowed addresses: the connection goes only to
 * an address this function returned, so the check is on the connected address. Resolution goes
 * through the bounded resolver (a name server that does not answer fails the attempt in time).
 */
export function guardedLookup(policy: UrlPolicy, resolver: HostResolver) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    resolver.resolve(hostname).then(
      (list) => {
        for (const a of list) {
          const rule = refusedAddress(a.address, policy);
          if (rule) {
            const e = refusal(rule, false) as Error & { code?: string };
            e.code = 'EADDRNOTALLOWED';
            return callback(e, '');
          }
        }
        if (list.length === 0) return callback(Object.assign(new Error('the host name did not resolve'), { code: 'ENOTFOUND' }), '');
        if (options.all) return callback(null, list);
        const first = list[0] as dns.LookupAddress;
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/** For an IP-literal host no lookup runs: the literal is checked here instead. */
export function checkLiteralHost(url: URL, policy: UrlPolicy): void {
  const literal = literalHost(url);
  if (!literal) return;
  const rule = refusedAddress(literal, policy);
  if (rule) throw refusal(rule, true);
}

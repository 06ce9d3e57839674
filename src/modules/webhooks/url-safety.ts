/**
 * Outbound safety of webhook URLs (SSRF): https only unless the operator allows http; the host
 * must resolve to public unicast addresses only, unless an address is in the operator's allow
 * list (INVOICING_WEBHOOK_ALLOW_PRIVATE). The check runs twice: when an endpoint is saved
 * (a clear 400) and on every connection, on the address actually connected to (a custom
 * `lookup`), so a DNS answer that changes after the first check (rebinding) gains nothing.
 */
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

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

/** Null when `address` may be connected to; otherwise why not (its range: loopback, private, …). */
export function refusedAddress(address: string, policy: Pick<UrlPolicy, 'allowPrivate'>): string | null {
  let addr: Parsed;
  try {
    addr = ipaddr.process(address);
  } catch {
    return `${address} is not an IP address`;
  }
  const range = addr.range();
  if (range === 'unicast') return null;
  if (allowedBy(addr, policy.allowPrivate)) return null;
  return `${address} is a ${range} address (not allowed for webhooks)`;
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

/**
 * Saving an endpoint: the form, then the addresses the host resolves to now. A host that does
 * not resolve at the moment is accepted (DNS may be down); every delivery checks again.
 */
export async function checkWebhookUrl(raw: string, policy: UrlPolicy): Promise<URL> {
  const url = checkUrlForm(raw, policy);
  const literal = literalHost(url);
  const addresses = literal
    ? [literal]
    : await dns.promises.lookup(url.hostname, { all: true, verbatim: true }).then(
        (list) => list.map((a) => a.address),
        () => [] as string[],
      );
  for (const address of addresses) {
    const refused = refusedAddress(address, policy);
    if (refused) throw new UnsafeUrlError(`${url.hostname} resolves to ${refused}`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses disallowed addresses: the connection goes only to
 * an address this function returned, so the check is on the connected address.
 */
export function guardedLookup(policy: UrlPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as dns.LookupAddress[];
      for (const a of list) {
        const refused = refusedAddress(a.address, policy);
        if (refused) {
          const e = new UnsafeUrlError(`${hostname} resolves to ${refused}`) as Error & { code?: string };
          e.code = 'EADDRNOTALLOWED';
          return callback(e, '');
        }
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), '');
      if (options.all) return callback(null, list);
      const first = list[0] as dns.LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** For an IP-literal host no lookup runs: the literal is checked here instead. */
export function checkLiteralHost(url: URL, policy: UrlPolicy): void {
  const literal = literalHost(url);
  if (!literal) return;
  const refused = refusedAddress(literal, policy);
  if (refused) throw new UnsafeUrlError(refused);
}

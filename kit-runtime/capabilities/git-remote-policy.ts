/**
 * Where the git capabilities may connect. The URL comes from the kit's input, so without a policy
 * a kit could make the worker call internal services, and the differing errors would map the
 * worker's network. The default (`isPublicHttpsRemote`) takes https to public addresses only; an
 * allow-list (KIT_GIT_ALLOWED_REMOTES) replaces it for deployments that push to internal servers.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { Agent as HttpsAgent } from 'node:https';
import { BlockList, isIP } from 'node:net';
import type { HttpClient } from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { untilAborted } from '../bounded-waits.ts';

/** The worker's own host and networks that are not public, including where IPv6 forms carry IPv4. */
const nonPublicAddresses = new BlockList();
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) {
  nonPublicAddresses.addSubnet(network, prefix, 'ipv4');
}
// Unspecified, loopback and IPv4-compatible (::/96), NAT64 (64:ff9b::/96, which reaches IPv4
// through a gateway), 6to4 (2002::/16), unique-local, site-local and link-local. (BlockList checks
// an IPv4-mapped address, ::ffff:127.0.0.1, against the IPv4 rules too.)
for (const [network, prefix] of [['::', 96], ['64:ff9b::', 96], ['2002::', 16], ['fc00::', 7], ['fec0::', 10], ['fe80::', 10]] as const) {
  nonPublicAddresses.addSubnet(network, prefix, 'ipv6');
}

export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && nonPublicAddresses.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The default remote policy: https, not `localhost` (a trailing dot changes nothing), and not an
 * address of the worker's own host or of a network that is not public when written as one. A name
 * is checked again where the connection is made (`publicOnlyLookup`).
 */
export function isPublicHttpsRemote(url: URL): boolean {
  if (url.protocol !== 'https:') return false;
  const host = withoutTrailing(url.hostname.replace(/^\[|\]$/g, ''), '.').toLowerCase();
  if (host === '' || host === 'localhost' || host.endsWith('.localhost')) return false;
  return !isNonPublicAddress(host);
}

export class NonPublicAddressError extends Error {
  override name = 'NonPublicAddressError';
  readonly code = 'ENONPUBLIC';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * `dns.lookup` that refuses a name resolving to any address that is not public: checked as the
 * socket connects, so a name cannot pass the URL check and then resolve inward.
 */
export function publicOnlyLookup(hostname: string, options: LookupAllOptions | { all?: boolean; family?: number }, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    if (addresses.length === 0 || addresses.some((entry) => isNonPublicAddress(entry.address))) {
      return callback(new NonPublicAddressError(`${hostname} resolves to an address that is not public`), []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

const publicOnlyAgent = new HttpsAgent({ lookup: publicOnlyLookup as never });

/**
 * isomorphic-git's HTTP client, following no redirect (one would lead past the policy: a server
 * answering 302 to http://169.254.169.254/ would have the worker fetch it), and, under the default
 * policy, connecting to public addresses only. Once `signal` aborts it starts no request, and
 * the one under way is destroyed: isomorphic-git takes a signal for a push only, not a clone.
 */
export function gitHttpClient(options: { publicAddressesOnly: boolean; signal: AbortSignal }): HttpClient {
  return {
    request: async (request) => {
      options.signal.throwIfAborted();
      const response = await http.request({
        ...request,
        signal: options.signal,
        ...(options.publicAddressesOnly ? { agent: publicOnlyAgent } : {}),
        fetchOptions: { ...(request as { fetchOptions?: object }).fetchOptions, followRedirects: false },
      } as Parameters<typeof http.request>[0]);
      return response.body === undefined ? response : { ...response, body: endedBy(options.signal, response.body) };
    },
  };
}

/**
 * A response body whose reads fail once `signal` aborts. isomorphic-git's Node body drops an error
 * that arrives while no read is waiting (the request destroyed between two reads), and its next
 * read then waits for ever: the operation would never end, nor its clone directory be removed.
 */
function endedBy(signal: AbortSignal, body: AsyncIterableIterator<Uint8Array>): AsyncIterableIterator<Uint8Array> {
  return {
    next: () => (signal.aborted ? Promise.reject(signal.reason) : untilAborted(body.next(), signal, () => signal.reason)),
    return: async (value?: unknown) => (await body.return?.(value)) ?? { done: true, value: undefined },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * `text` without the run of `character` it ends with. Not /\.+$/: V8 tries that at every character
 * of a run that does not end the text, quadratic in its length (a remote of 100,000 dots took 21 s
 * of the worker's thread), and the URL is the kit's.
 */
export function withoutTrailing(text: string, character: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === character) end--;
  return text.slice(0, end);
}

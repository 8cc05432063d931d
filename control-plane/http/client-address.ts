import ipaddr from 'ipaddr.js';

/**
 * The client address rate limits and sign-in throttles count against. An IPv4 address counts as is
 * (also when it arrives IPv4-mapped, `::ffff:10.0.0.1`); an IPv6 address counts by its /64 network,
 * since a single subscriber is routinely handed a whole /64 and could otherwise take a fresh budget
 * with every address in it. Which address is the client's is express's `req.ip`: the socket's peer,
 * or, behind proxies named by TRUST_PROXY, what they forwarded.
 */
export function clientAddressOf(ip: string | undefined): string {
  if (ip === undefined || !ipaddr.isValid(ip)) return 'unknown';
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const network = (address as ipaddr.IPv6).toNormalizedString().split(':').slice(0, 4);
  return `${ipaddr.IPv6.parse(`${network.join(':')}::`).toString()}/64`;
}

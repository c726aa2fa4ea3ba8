import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns'
import type { LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'

/**
 * Where webhooks may go: https to public addresses. WEBHOOKS_ALLOW_HTTP adds http and loopback
 * addresses (a local receiver); WEBHOOKS_ALLOWED_CIDRS names private ranges that are allowed too.
 * Checked when an endpoint is registered (its scheme, and its host when that is an address) and again
 * at each delivery after DNS resolution, on the very addresses the connection then uses, so a name
 * that resolves to an internal address is refused.
 */
export interface AddressPolicy {
  allowHttp: boolean
  allowedCidrs: [ipaddr.IPv4 | ipaddr.IPv6, number][]
}

/** A URL or an address that the policy refuses; the message says why. */
export class RefusedAddressError extends Error {}

/** WEBHOOKS_ALLOWED_CIDRS: comma-separated CIDR ranges; throws naming the entry that is not one. */
export function parseAllowedCidrs(value: string): [ipaddr.IPv4 | ipaddr.IPv6, number][] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      try {
        return ipaddr.parseCIDR(entry)
      } catch {
        throw new Error(`'${entry}' is not a CIDR range such as 10.0.0.0/8`)
      }
    })
}

/** `::a.b.c.d`, which ipaddr.js calls unicast: the IPv4 address it embeds (::127.0.0.1 too) may be reached through it. */
const isIpv4Compatible = (address: ipaddr.IPv6) => address.parts.slice(0, 6).every((part) => part === 0)

/** Why the policy refuses the address, or undefined when it may be called. */
export function addressRefusal(address: string, policy: AddressPolicy): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(address)
  } catch {
    return `${address} is not an IP address`
  }
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  }
  for (const [range, bits] of policy.allowedCidrs) {
    if (range.kind() === parsed.kind() && parsed.match(range, bits)) return undefined
  }
  const kind = parsed.range()
  if (kind === 'unicast' && parsed.kind() === 'ipv6' && isIpv4Compatible(parsed as ipaddr.IPv6)) {
    return `${address} is an IPv4-compatible address (::/96, deprecated); only public addresses are called unless WEBHOOKS_ALLOWED_CIDRS names its range`
  }
  if (kind === 'unicast') return undefined
  if (kind === 'loopback' && policy.allowHttp) return undefined
  return `${address} is a ${kind} address; only public addresses are called${kind === 'loopback' ? ' (WEBHOOKS_ALLOW_HTTP allows loopback)' : ' unless WEBHOOKS_ALLOWED_CIDRS names its range'}`
}

const hostAddress = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1')

/** The URL as an endpoint may have it: https (http too with WEBHOOKS_ALLOW_HTTP), no credentials, an allowed address if it names one. */
export function checkEndpointUrl(text: string, policy: AddressPolicy): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new RefusedAddressError(`'${text}' is not an absolute URL`)
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowHttp)) {
    throw new RefusedAddressError(
      `The URL must be https${url.protocol === 'http:' ? ' (WEBHOOKS_ALLOW_HTTP allows http, for local receivers)' : ''}`
    )
  }
  if (url.username !== '' || url.password !== '') throw new RefusedAddressError('The URL must not carry credentials')
  if (url.hash !== '') throw new RefusedAddressError('The URL must not carry a fragment')
  checkLiteralHost(url, policy)
  return url
}

/**
 * A `lookup` for the HTTP request: resolves the name, refuses it when any of its addresses is
 * refused, and hands the connection exactly the addresses checked (no second resolution to rebind).
 */
export function checkedLookup(policy: AddressPolicy, resolve = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4)
      const refusal = addresses.map((entry) => addressRefusal(entry.address, policy)).find(Boolean)
      if (refusal) return callback(new RefusedAddressError(`${hostname} resolves to ${refusal}`), '', 4)
      if ((options as { all?: boolean }).all) {
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses)
      }
      callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }
}

/** Refuses a URL whose host is an address the policy refuses (Node connects to a literal without a lookup). */
function checkLiteralHost(url: URL, policy: AddressPolicy): void {
  const host = hostAddress(url)
  if (!ipaddr.isValid(host)) return
  const refusal = addressRefusal(host, policy)
  if (refusal) throw new RefusedAddressError(refusal)
}

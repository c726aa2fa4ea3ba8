import ipaddr from 'ipaddr.js'

/** A key's allow-list holds at most this many ranges. */
export const MOST_ALLOWED_ADDRESSES = 20

type Address = ipaddr.IPv4 | ipaddr.IPv6

// Four decimal parts without leading zeros: ipaddr.js would read `010.0.0.1` as octal, 8.0.0.1.
const FOUR_PART_DECIMAL = /^(0|[1-9][0-9]{0,2})(\.(0|[1-9][0-9]{0,2})){3}$/
const PREFIX_LENGTH = /^(0|[1-9][0-9]{0,2})$/

/** An IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is its IPv4 address; any other is itself. */
function unmapped(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address
}

/** An address as written in an entry, or undefined when the text is not one (octal parts and zones are not). */
function parseAddress(text: string): Address | undefined {
  if (FOUR_PART_DECIMAL.test(text)) return ipaddr.IPv4.isValid(text) ? ipaddr.IPv4.parse(text) : undefined
  if (text.includes('%') || !ipaddr.IPv6.isValid(text)) return undefined
  return ipaddr.IPv6.parse(text)
}

/**
 * One entry of an allow-list in the form the service stores: `address/bits`, the address in its
 * shortest form, a bare address as /32 or /128, an IPv4-mapped range as its IPv4 range. Throws a
 * RangeError that says what is wrong: not an address, a prefix too long, or bits set past the prefix.
 */
export function canonicalRange(entry: string): string {
  const slash = entry.indexOf('/')
  const written = parseAddress(slash === -1 ? entry : entry.slice(0, slash))
  if (!written) throw new RangeError(`'${entry}' is not an IPv4 or IPv6 address or CIDR range`)
  const widest = written.kind() === 'ipv4' ? 32 : 128
  const bitsText = slash === -1 ? String(widest) : entry.slice(slash + 1)
  const bits = PREFIX_LENGTH.test(bitsText) ? Number(bitsText) : Number.NaN
  if (!(bits <= widest)) throw new RangeError(`'${entry}' needs a prefix length from 0 to ${widest}`)
  const mapped = written !== unmapped(written) && bits >= 96
  const address = mapped ? unmapped(written) : written
  const prefix = mapped ? bits - 96 : bits
  const network = networkOf(address, prefix)
  if (network.toString() !== address.toString()) {
    throw new RangeError(
      `'${entry}' has bits set past its /${bits} prefix: the range is ${network.toString()}/${prefix}`
    )
  }
  return `${address.toString()}/${prefix}`
}

/** The first address of the range of `bits` that holds `address`. */
function networkOf(address: Address, bits: number): Address {
  const bytes = address.toByteArray().map((byte, index) => {
    const kept = Math.min(8, Math.max(0, bits - index * 8))
    return byte & ((0xff << (8 - kept)) & 0xff)
  })
  return ipaddr.fromByteArray(bytes)
}

/**
 * Whether every address an allow-list (`inner`, canonical ranges) admits, another (`outer`) admits
 * too: a key may not hand on more than it has. null or none admits every address.
 */
export function rangesWithin(inner: readonly string[] | null, outer: readonly string[] | null): boolean {
  if (outer === null || outer.length === 0) return true
  if (inner === null || inner.length === 0) return false
  const fences = outer.map((range) => ipaddr.parseCIDR(range))
  return inner.every((range) => {
    const [address, bits] = ipaddr.parseCIDR(range)
    return fences.some(
      ([fence, fenceBits]) => fence.kind() === address.kind() && fenceBits <= bits && address.match(fence, fenceBits)
    )
  })
}

/**
 * A key's allow-list, parsed once (when its record is cached) so that a request only parses its own
 * address. IPv4 ranges hold IPv4 clients, IPv6 ranges IPv6 clients; a client's IPv4-mapped IPv6
 * address counts as its IPv4 address.
 */
export class AllowedAddresses {
  readonly #ranges: [Address, number][]

  private constructor(ranges: [Address, number][]) {
    this.#ranges = ranges
  }

  /** The ranges as stored (canonical CIDR text); null or none: every address is allowed, and there is no list. */
  static of(ranges: readonly string[] | null): AllowedAddresses | null {
    if (ranges === null || ranges.length === 0) return null
    return new AllowedAddresses(ranges.map((range) => ipaddr.parseCIDR(range)))
  }

  /** Whether a client at `address` (an IP address, as clientAddress gives it) may use the key. */
  includes(address: string): boolean {
    if (!ipaddr.isValid(address)) return false
    const client = unmapped(ipaddr.parse(address))
    return this.#ranges.some(([range, bits]) => range.kind() === client.kind() && client.match(range, bits))
  }
}

// How many units an instance counts ahead for a subject (a lease): pure, no I/O.

/** A lease covers about this many seconds of a subject's recent traffic on this instance... */
const LEASE_SECONDS = 5
/** ...and never more than this share of what its windows have left, nor this many units. */
const LEASE_SHARE = 1 / 32
const LEASE_MAX = 1_000

/**
 * The units to ask for: 1 for a slow or nearly spent subject (exact to the request), more only for
 * a busy subject with much left. The lease never outlives the minute it is counted in.
 */
export function leaseSize(options: { requestsPerSecond: number; msLeftInMinute: number; left: number }): number {
  const { requestsPerSecond, msLeftInMinute, left } = options
  const size = Math.min(
    Math.ceil(requestsPerSecond * Math.min(LEASE_SECONDS, msLeftInMinute / 1000)),
    Math.floor(left * LEASE_SHARE),
    LEASE_MAX
  )
  return Math.max(1, size)
}

/** Requests seen in the current and the previous whole second: the rate a lease is sized by. */
export class RequestRate {
  #second = 0
  #count = 0
  #previous = 0

  count(now: number): void {
    const second = Math.floor(now / 1000)
    if (second !== this.#second) {
      this.#previous = second === this.#second + 1 ? this.#count : 0
      this.#second = second
      this.#count = 0
    }
    this.#count++
  }

  perSecond(): number {
    return Math.max(this.#count, this.#previous)
  }
}

/**
 * A ceiling on the requests one instance serves in each clock second: past it a request is shed
 * before any other work. In memory, per instance.
 */
export class PerSecondCeiling {
  #second = Number.NaN
  #served = 0

  constructor(readonly perSecond: number) {}

  /** Counts one request at `now` (Unix ms); false when this second's ceiling was already reached. */
  admit(now: number): boolean {
    const second = Math.floor(now / 1000)
    if (second !== this.#second) {
      this.#second = second
      this.#served = 0
    }
    if (this.#served >= this.perSecond) return false
    this.#served++
    return true
  }
}

/**
 * The database's clock as this instance reads it: its own clock plus the offset measured by the
 * last statement that reported the database's time. Every limit is decided on the database's clock;
 * an instance that admits from what it holds (a lease, a known ban) uses this estimate, never its
 * own wall clock as truth, and leaves itself the measurement's uncertainty (half the round trip).
 */
export class DatabaseClock {
  #offset = 0
  #uncertainty = Number.POSITIVE_INFINITY

  constructor(private readonly local: () => number = Date.now) {}

  /** The database's time now, as estimated here, in epoch milliseconds. */
  now(): number {
    return this.local() + this.#offset
  }

  /** This instance's own clock, to time a statement with. */
  localNow(): number {
    return this.local()
  }

  /** Whether the database's clock is surely still before `at`, whatever the error of the estimate. */
  surelyBefore(at: number): boolean {
    return this.now() + this.#uncertainty < at
  }

  /** Milliseconds this instance's clock is behind the database's (negative: ahead), as last measured. */
  get offset(): number {
    return this.#offset
  }

  /** Takes the database's time `databaseNow` reported by a statement sent and answered at these local instants. */
  observe(databaseNow: number, sentAt: number, answeredAt: number): void {
    this.#offset = databaseNow - (sentAt + answeredAt) / 2
    this.#uncertainty = Math.max(1, (answeredAt - sentAt) / 2)
  }
}

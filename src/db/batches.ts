import { AsyncResource } from 'node:async_hooks'

const runHere = (run: () => void) => run()

/**
 * A function that runs another in the async context it was made in: an AsyncResource, as
 * AsyncLocalStorage.snapshot() makes too, without the bound function whose deprecated property makes
 * that cost 11 µs a call on Node 20, against 0.1 µs
 * (docs/benchmark.md#the-request-context-kept-for-the-next-statement-against-the-commit-before).
 */
function contextHere(): (run: () => void) => void {
  const resource = new AsyncResource('Batches')
  return (run) => resource.runInAsyncScope(run)
}

/**
 * One statement under way at a time: the items that fall due while it runs go together in the next,
 * one round trip for all of them. A statement's first item costs PostgreSQL far more than each
 * further one, and every round trip costs a system call on each side, so waiting for the one under
 * way buys larger, cheaper batches (docs/history/benchmark.md#measurements-behind-the-code).
 */
export class Batches<Item, Result> {
  #due: { item: Item; resolve: (result: Result) => void; reject: (error: unknown) => void }[] = []
  #running = false
  /** Runs a function in the async context of the request whose item started the next statement. */
  #startedBy: (run: () => void) => void = runHere

  /**
   * `run` answers the items in their order. `full` is the error for an item that finds `maxDue`
   * waiting: it fails at once rather than queue without end.
   */
  constructor(
    private readonly run: (items: Item[]) => Promise<Result[]>,
    private readonly maxDue: number,
    private readonly full: () => Error
  ) {}

  /** Items waiting for the next statement. */
  get depth(): number {
    return this.#due.length
  }

  add(item: Item): Promise<Result> {
    if (this.#due.length >= this.maxDue) return Promise.reject(this.full())
    return new Promise((resolve, reject) => {
      this.#due.push({ item, resolve, reject })
      if (this.#due.length !== 1) return
      // A trace shows the statement under that request, not under the one whose statement ran before.
      if (this.#running) this.#startedBy = contextHere()
      else this.#runSoon()
    })
  }

  /** Runs what is due once the current event-loop turn has queued all it will. */
  #runSoon() {
    setImmediate(() => {
      void this.#runDue()
    })
  }

  async #runDue() {
    const due = this.#due
    this.#due = []
    this.#running = true
    try {
      const results = await this.run(due.map(({ item }) => item))
      due.forEach(({ resolve }, i) => resolve(results[i]!))
    } catch (error) {
      // Those that queued behind a failed statement fail with it, rather than wait out the database
      // timeout once more in the next one.
      const queued = this.#due
      this.#due = []
      for (const { reject } of [...due, ...queued]) reject(error)
    } finally {
      this.#running = false
      const startedBy = this.#startedBy
      this.#startedBy = runHere
      if (this.#due.length > 0) startedBy(() => this.#runSoon())
    }
  }
}

import { LRUCache } from 'lru-cache'
import type { WindowState } from '../../limits/windows.js'
import type { StoredStanding } from '../../repositories/rate-limits.js'

/** A read this recent answers without another. */
const FRESH_MS = 1_000
/** Reads one key may start on an instance: this many at once, then one every READ_EVERY_MS. */
const READ_BURST = 10
const READ_EVERY_MS = 3_000
const MAX_EARNED = READ_BURST * READ_EVERY_MS
/** Keys whose last read is kept, the least recently asked first out. */
const MAX_KEYS = 10_000

/** Reads a key's standing from the database, at its clock's now. */
export type ReadStanding = (apiKeyId: bigint, accountId: bigint) => Promise<StoredStanding>

/** A standing as read, and this process's monotonic instant (performance.now()) the read started. */
export interface StandingRead {
  standing: StoredStanding
  startedAt: number
}

interface Snapshot {
  read: StandingRead | undefined
  /** When the read that gave `read` started, on the database's clock as this instance reckons it. */
  readAt: number
  /** The read under way: callers meanwhile wait for it rather than start their own. */
  reading: Promise<StandingRead> | undefined
  /** Milliseconds of reading earned and not spent, as of `earnedAt`: each read spends READ_EVERY_MS. */
  earned: number
  earnedAt: number
}

/**
 * Each key's standing as this instance last read it from the database, so that asking where a key
 * stands costs the database little however often it is asked. A read younger than FRESH_MS is
 * answered again; an older one is read afresh while the key has reads left (READ_BURST, refilled one
 * every READ_EVERY_MS), and answered as it is once they are spent. A read that shows a fixed window
 * as it was before its end is read afresh once after the end, so that no answer shows an ended window.
 */
export class StandingSnapshots {
  readonly #snapshots: LRUCache<bigint, Snapshot>

  constructor(
    private readonly read: ReadStanding,
    options: { maxKeys?: number } = {}
  ) {
    this.#snapshots = new LRUCache({ max: options.maxKeys ?? MAX_KEYS })
  }

  /** Keys whose last read is kept. */
  get size(): number {
    return this.#snapshots.size
  }

  async standing(apiKeyId: bigint, accountId: bigint, now: number): Promise<StandingRead> {
    let snapshot = this.#snapshots.get(apiKeyId)
    if (!snapshot) {
      snapshot = { read: undefined, readAt: 0, reading: undefined, earned: MAX_EARNED, earnedAt: now }
      this.#snapshots.set(apiKeyId, snapshot)
    }
    if (snapshot.reading) return snapshot.reading
    const read =
      snapshot.read && !windowEndedSince(snapshot.read.standing, snapshot.readAt, now) ? snapshot.read : undefined
    // A clock that moved back makes no read fresh and refills nothing.
    const age = now - snapshot.readAt
    if (read && age >= 0 && age < FRESH_MS) return read
    snapshot.earned = Math.min(MAX_EARNED, snapshot.earned + Math.max(0, now - snapshot.earnedAt))
    snapshot.earnedAt = now
    if (read && snapshot.earned < READ_EVERY_MS) return read
    snapshot.earned -= READ_EVERY_MS
    const startedAt = performance.now()
    const reading = this.read(apiKeyId, accountId).then((standing) => ({ standing, startedAt }))
    snapshot.reading = reading
    try {
      snapshot.read = await reading
      snapshot.readAt = now
      return snapshot.read
    } finally {
      snapshot.reading = undefined
    }
  }
}

/** Whether a fixed window of the standing read at `readAt` ended after that and by `now`. */
function windowEndedSince(standing: StoredStanding, readAt: number, now: number): boolean {
  const ended = (window: WindowState) =>
    window.algorithm === 'fixed' && window.resetAt > readAt && window.resetAt <= now
  return standing.windows.some(ended) || standing.shadows.some(ended)
}

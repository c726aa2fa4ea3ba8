import { describe, expect, it } from 'vitest'
import { DatabaseClock } from '../../../src/db/clock.js'

const LOCAL = Date.UTC(2027, 0, 1, 12)

/** A clock over a local clock the test moves. */
function make() {
  const local = { now: LOCAL }
  return { local, clock: new DatabaseClock(() => local.now) }
}

describe('DatabaseClock', () => {
  it('reads the local clock until it has observed the database', () => {
    const { local, clock } = make()
    expect(clock.offset).toBe(0)
    expect(clock.now()).toBe(LOCAL)
    expect(clock.localNow()).toBe(LOCAL)
    local.now += 250
    expect(clock.now()).toBe(LOCAL + 250)
  })

  it('is not surely before any instant until it has observed the database', () => {
    const { clock } = make()
    expect(clock.surelyBefore(LOCAL + 3_600_000)).toBe(false)
    expect(clock.surelyBefore(Number.MAX_SAFE_INTEGER)).toBe(false)
  })

  it('takes the offset from the midpoint of the round trip, and adds it to the local clock', () => {
    const { local, clock } = make()
    // Sent at LOCAL - 40, answered at LOCAL + 20: the database read its clock at LOCAL - 10, local time.
    clock.observe(LOCAL + 4_990, LOCAL - 40, LOCAL + 20)
    expect(clock.offset).toBe(5_000)
    expect(clock.now()).toBe(LOCAL + 5_000)
    // The local clock alone moves on: its own reading is never corrected.
    local.now += 1_000
    expect(clock.now()).toBe(LOCAL + 6_000)
    expect(clock.localNow()).toBe(LOCAL + 1_000)
  })

  it('measures a local clock that runs ahead as a negative offset, and the last observation wins', () => {
    const { clock } = make()
    clock.observe(LOCAL - 2_000, LOCAL, LOCAL)
    expect(clock.offset).toBe(-2_000)
    expect(clock.now()).toBe(LOCAL - 2_000)
    clock.observe(LOCAL + 300, LOCAL - 10, LOCAL + 10)
    expect(clock.offset).toBe(300)
  })

  it('leaves itself half the round trip of uncertainty', () => {
    const { clock } = make()
    // A 200 ms round trip: the database's time is known to within 100 ms either way.
    clock.observe(LOCAL, LOCAL - 100, LOCAL + 100)
    expect(clock.now()).toBe(LOCAL)
    expect(clock.surelyBefore(LOCAL + 100)).toBe(false)
    expect(clock.surelyBefore(LOCAL + 101)).toBe(true)
  })

  it('leaves itself at least 1 ms of uncertainty, however quick the round trip', () => {
    const { clock } = make()
    clock.observe(LOCAL, LOCAL, LOCAL)
    expect(clock.surelyBefore(LOCAL + 1)).toBe(false)
    expect(clock.surelyBefore(LOCAL + 2)).toBe(true)
    clock.observe(LOCAL, LOCAL - 0.5, LOCAL + 0.5)
    expect(clock.surelyBefore(LOCAL + 1)).toBe(false)
    expect(clock.surelyBefore(LOCAL + 2)).toBe(true)
  })

  it('reads the system clock when given none', () => {
    const before = Date.now()
    const now = new DatabaseClock().now()
    expect(now).toBeGreaterThanOrEqual(before)
    expect(now).toBeLessThanOrEqual(Date.now())
  })
})

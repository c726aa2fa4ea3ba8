import { describe, expect, it } from 'vitest'
import { describeSchedule, FAULT_KINDS, makeSchedule, makeUpgradeSchedule, seedFrom } from '../../../chaos/schedule.js'

describe('the chaos schedule', () => {
  it('is the same for the same seed, and another for another', () => {
    expect(makeSchedule(42, 60)).toEqual(makeSchedule(42, 60))
    expect(makeSchedule(43, 60).faults).not.toEqual(makeSchedule(42, 60).faults)
  })

  it('holds every kind of fault and three kills of the primary, never back to back', () => {
    for (const seed of [0, 1, 2, 3, 7, 42, 20261126, 0xffffffff]) {
      for (const [seconds, instanceFaults] of [
        [60, 3],
        [180, 5]
      ] as const) {
        const { faults } = makeSchedule(seed, seconds)
        expect(new Set(faults.map((fault) => fault.kind))).toEqual(new Set(FAULT_KINDS))
        expect(faults.filter((fault) => fault.kind === 'kill-primary')).toHaveLength(3)
        expect(faults.filter((fault) => fault.lane === 'instances')).toHaveLength(instanceFaults)
        const database = faults.filter((fault) => fault.lane === 'database').map((fault) => fault.kind)
        expect(database.some((kind, i) => kind === 'kill-primary' && database[i + 1] === 'kill-primary')).toBe(false)
        const skew = faults.find((fault) => fault.kind === 'clock-skew')!
        expect(skew.behind).not.toBe(skew.instance)
        expect(faults.map((fault) => fault.id)).toEqual(faults.map((_, i) => i + 1))
      }
    }
  })

  it('upgrades by migrating first, then replacing each instance in turn, with no other fault, for any seed', () => {
    const schedule = makeUpgradeSchedule(7)
    expect(makeUpgradeSchedule(8).faults).toEqual(schedule.faults)
    expect(schedule.faults.map((fault) => [fault.id, fault.lane, fault.kind, fault.instance])).toEqual([
      [1, 'instances', 'replace-instance', 'a'],
      [2, 'instances', 'replace-instance', 'b'],
      [3, 'instances', 'replace-instance', 'c']
    ])
    // Old and new instances serve side by side before each replacement.
    expect(Math.min(...schedule.faults.map((fault) => fault.pauseMs))).toBeGreaterThanOrEqual(5000)
    expect(describeSchedule(schedule)[0]).toMatch(/^migration: after 10\.0 s/)
    expect(describeSchedule(makeSchedule(7, 60)).some((line) => line.startsWith('migration'))).toBe(false)
  })

  it('reads CHAOS_SEED, or draws one', () => {
    expect(seedFrom('7', () => 1)).toBe(7)
    expect(seedFrom(undefined, () => 99)).toBe(99)
    expect(seedFrom('', () => 99)).toBe(99)
    expect(() => seedFrom('x', () => 1)).toThrow(/CHAOS_SEED/)
    expect(() => seedFrom('-1', () => 1)).toThrow(/CHAOS_SEED/)
  })
})

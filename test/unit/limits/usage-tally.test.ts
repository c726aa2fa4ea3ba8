import { describe, expect, it } from 'vitest'
import { UsageTally } from '../../../src/limits/usage-tally.js'

const HOUR = Date.UTC(2027, 0, 1, 9)
const NEXT_HOUR = Date.UTC(2027, 0, 1, 10)

describe('UsageTally', () => {
  it('counts per key and hour, and takes every key when none is named', () => {
    const tally = new UsageTally()
    tally.count(1n, HOUR, 'admitted', 1)
    tally.count(1n, HOUR, 'admitted', 1)
    tally.count(1n, HOUR, 'refused')
    tally.count(1n, NEXT_HOUR, 'admitted', 1)
    tally.count(2n, HOUR, 'refused')
    expect(tally.keys).toBe(2)
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, hour: HOUR, admitted: 2, refused: 1, units: 2 },
      { apiKeyId: 1n, hour: NEXT_HOUR, admitted: 1, refused: 0, units: 1 },
      { apiKeyId: 2n, hour: HOUR, admitted: 0, refused: 1, units: 0 }
    ])
    expect(tally.keys).toBe(0)
    expect(tally.take()).toEqual([])
  })

  it('adds up the units of each request, which a route may cost many of or none', () => {
    const tally = new UsageTally()
    tally.count(1n, HOUR, 'admitted', 5)
    tally.count(1n, HOUR, 'admitted', 0)
    tally.count(1n, HOUR, 'admitted', 3)
    tally.count(1n, HOUR, 'admitted')
    expect(tally.take()).toEqual([{ apiKeyId: 1n, hour: HOUR, admitted: 4, refused: 0, units: 8 }])
  })

  it('takes only the keys named, leaving the others', () => {
    const tally = new UsageTally()
    tally.count(1n, HOUR, 'admitted', 1)
    tally.count(2n, HOUR, 'admitted', 2)
    expect(tally.take([2n, 3n])).toEqual([{ apiKeyId: 2n, hour: HOUR, admitted: 1, refused: 0, units: 2 }])
    expect(tally.keys).toBe(1)
    expect(tally.take()).toEqual([{ apiKeyId: 1n, hour: HOUR, admitted: 1, refused: 0, units: 1 }])
  })

  it('adds restored reports, their units included, to what was counted meanwhile', () => {
    const tally = new UsageTally()
    tally.count(1n, HOUR, 'admitted', 4)
    const taken = tally.take()
    tally.count(1n, HOUR, 'refused')
    tally.count(1n, HOUR, 'admitted', 2)
    tally.restore([...taken, { apiKeyId: 3n, hour: NEXT_HOUR, admitted: 4, refused: 5, units: 40 }])
    expect(tally.keys).toBe(2)
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, hour: HOUR, admitted: 2, refused: 1, units: 6 },
      { apiKeyId: 3n, hour: NEXT_HOUR, admitted: 4, refused: 5, units: 40 }
    ])
  })
})

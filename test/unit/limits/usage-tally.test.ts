import { describe, expect, it } from 'vitest'
import { UsageTally } from '../../../src/limits/usage-tally.js'

const HOUR = Date.UTC(2027, 0, 1, 9)
const NEXT_HOUR = Date.UTC(2027, 0, 1, 10)

describe('UsageTally', () => {
  it('counts per key and hour, and takes every key when none is named', () => {
    const tally = new UsageTally()
    tally.count(1n, HOUR, 'admitted')
    tally.count(1n, HOUR, 'admitted')
    tally.count(1n, HOUR, 'refused')
    tally.count(1n, NEXT_HOUR, 'admitted')
    tally.count(2n, HOUR, 'refused')
    expect(tally.keys).toBe(2)
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, hour: HOUR, admitted: 2, refused: 1 },
      { apiKeyId: 1n, hour: NEXT_HOUR, admitted: 1, refused: 0 },
      { apiKeyId: 2n, hour: HOUR, admitted: 0, refused: 1 }
    ])
    expect(tally.keys).toBe(0)
    expect(tally.take()).toEqual([])
  })

  it('takes only the keys named, leaving the others', () => {
    const tally = new UsageTally()
    tally.count(1n, HOUR, 'admitted')
    tally.count(2n, HOUR, 'admitted')
    expect(tally.take([2n, 3n])).toEqual([{ apiKeyId: 2n, hour: HOUR, admitted: 1, refused: 0 }])
    expect(tally.keys).toBe(1)
    expect(tally.take()).toEqual([{ apiKeyId: 1n, hour: HOUR, admitted: 1, refused: 0 }])
  })

  it('adds restored reports to what was counted meanwhile', () => {
    const tally = new UsageTally()
    tally.count(1n, HOUR, 'admitted')
    const taken = tally.take()
    tally.count(1n, HOUR, 'refused')
    tally.restore([...taken, { apiKeyId: 3n, hour: NEXT_HOUR, admitted: 4, refused: 5 }])
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, hour: HOUR, admitted: 1, refused: 1 },
      { apiKeyId: 3n, hour: NEXT_HOUR, admitted: 4, refused: 5 }
    ])
  })
})

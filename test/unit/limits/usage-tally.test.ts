import { describe, expect, it } from 'vitest'
import { UsageTally } from '../../../src/limits/usage-tally.js'

const DAY = Date.UTC(2027, 0, 1)
const NEXT_DAY = Date.UTC(2027, 0, 2)

describe('UsageTally', () => {
  it('counts per key and day, and takes every key when none is named', () => {
    const tally = new UsageTally()
    tally.count(1n, DAY, 'admitted')
    tally.count(1n, DAY, 'admitted')
    tally.count(1n, DAY, 'refused')
    tally.count(1n, NEXT_DAY, 'admitted')
    tally.count(2n, DAY, 'refused')
    expect(tally.keys).toBe(2)
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, day: DAY, admitted: 2, refused: 1 },
      { apiKeyId: 1n, day: NEXT_DAY, admitted: 1, refused: 0 },
      { apiKeyId: 2n, day: DAY, admitted: 0, refused: 1 }
    ])
    expect(tally.keys).toBe(0)
    expect(tally.take()).toEqual([])
  })

  it('takes only the keys named, leaving the others', () => {
    const tally = new UsageTally()
    tally.count(1n, DAY, 'admitted')
    tally.count(2n, DAY, 'admitted')
    expect(tally.take([2n, 3n])).toEqual([{ apiKeyId: 2n, day: DAY, admitted: 1, refused: 0 }])
    expect(tally.keys).toBe(1)
    expect(tally.take()).toEqual([{ apiKeyId: 1n, day: DAY, admitted: 1, refused: 0 }])
  })

  it('adds restored reports to what was counted meanwhile', () => {
    const tally = new UsageTally()
    tally.count(1n, DAY, 'admitted')
    const taken = tally.take()
    tally.count(1n, DAY, 'refused')
    tally.restore([...taken, { apiKeyId: 3n, day: NEXT_DAY, admitted: 4, refused: 5 }])
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, day: DAY, admitted: 1, refused: 1 },
      { apiKeyId: 3n, day: NEXT_DAY, admitted: 4, refused: 5 }
    ])
  })
})

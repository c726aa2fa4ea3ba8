import { describe, expect, it } from 'vitest'
import { leaseSize, RequestRate } from '../../../src/limits/lease-policy.js'

describe('leaseSize', () => {
  it('is 1 for a slow subject: exact to the request', () => {
    expect(leaseSize({ requestsPerSecond: 0, msLeftInMinute: 60_000, left: 10_000 })).toBe(1)
    expect(leaseSize({ requestsPerSecond: 1, msLeftInMinute: 60_000, left: 10_000 })).toBe(5)
  })

  it('covers about 5 s of a busy subject’s traffic', () => {
    expect(leaseSize({ requestsPerSecond: 20, msLeftInMinute: 60_000, left: 100_000 })).toBe(100)
  })

  it('never outlives the minute', () => {
    expect(leaseSize({ requestsPerSecond: 20, msLeftInMinute: 2_500, left: 100_000 })).toBe(50)
    expect(leaseSize({ requestsPerSecond: 20, msLeftInMinute: 5_000, left: 100_000 })).toBe(100)
    expect(leaseSize({ requestsPerSecond: 20, msLeftInMinute: 10, left: 100_000 })).toBe(1)
  })

  it('takes at most a 32nd of what is left, and never more than 1,000', () => {
    expect(leaseSize({ requestsPerSecond: 100, msLeftInMinute: 60_000, left: 3_200 })).toBe(100)
    expect(leaseSize({ requestsPerSecond: 100, msLeftInMinute: 60_000, left: 3_199 })).toBe(99)
    expect(leaseSize({ requestsPerSecond: 100, msLeftInMinute: 60_000, left: 31 })).toBe(1)
    expect(leaseSize({ requestsPerSecond: 10_000, msLeftInMinute: 60_000, left: 10_000_000 })).toBe(1_000)
  })
})

describe('RequestRate', () => {
  it('counts the requests of the current second', () => {
    const rate = new RequestRate()
    expect(rate.perSecond()).toBe(0)
    for (let i = 0; i < 3; i++) rate.count(10_000 + i * 100)
    expect(rate.perSecond()).toBe(3)
  })

  it('remembers the previous whole second while the new one is quieter', () => {
    const rate = new RequestRate()
    for (let i = 0; i < 4; i++) rate.count(10_000 + i)
    rate.count(11_000)
    expect(rate.perSecond()).toBe(4)
    for (let i = 0; i < 5; i++) rate.count(11_500 + i)
    expect(rate.perSecond()).toBe(6)
  })

  it('forgets a second that is not the one just before', () => {
    const rate = new RequestRate()
    for (let i = 0; i < 4; i++) rate.count(10_000 + i)
    rate.count(12_000)
    expect(rate.perSecond()).toBe(1)
  })
})

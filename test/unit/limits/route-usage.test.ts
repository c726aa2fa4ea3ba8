import { describe, expect, it } from 'vitest'
import { RouteUsageTally } from '../../../src/limits/route-usage.js'

const HOUR = Date.parse('2027-03-15T10:00:00Z')

describe('RouteUsageTally', () => {
  it('counts by key, hour and route, and hands everything over once', () => {
    const tally = new RouteUsageTally()
    tally.count(1n, HOUR, 'GET /v1/pets', 'admitted', 1)
    tally.count(1n, HOUR, 'GET /v1/pets', 'admitted', 1)
    tally.count(1n, HOUR, 'GET /v1/pets/{petId}', 'refused', 0)
    tally.count(2n, HOUR, 'GET /v1/pets', 'admitted', 3)
    tally.count(1n, HOUR + 3_600_000, 'GET /v1/pets', 'refused', 0)
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, hour: HOUR, route: 'GET /v1/pets', admitted: 2, refused: 0, units: 2 },
      { apiKeyId: 1n, hour: HOUR, route: 'GET /v1/pets/{petId}', admitted: 0, refused: 1, units: 0 },
      { apiKeyId: 2n, hour: HOUR, route: 'GET /v1/pets', admitted: 1, refused: 0, units: 3 },
      { apiKeyId: 1n, hour: HOUR + 3_600_000, route: 'GET /v1/pets', admitted: 0, refused: 1, units: 0 }
    ])
    expect(tally.take()).toEqual([])
    expect(tally.size).toBe(0)
  })

  it('puts back a report that failed, adding to what was counted meanwhile', () => {
    const tally = new RouteUsageTally()
    tally.count(1n, HOUR, 'GET /v1/pets', 'admitted', 2)
    const failed = tally.take()
    tally.count(1n, HOUR, 'GET /v1/pets', 'refused', 0)
    tally.restore(failed)
    expect(tally.take()).toEqual([
      { apiKeyId: 1n, hour: HOUR, route: 'GET /v1/pets', admitted: 1, refused: 1, units: 2 }
    ])
  })
})

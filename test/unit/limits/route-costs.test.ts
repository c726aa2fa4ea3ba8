import { describe, expect, it } from 'vitest'
import { requestPath, ROUTE_NAME, routeCostOf } from '../../../src/limits/route-costs.js'

const costs = {
  'GET /v1/orders': 2,
  'GET /v1/orders/{id}': 3,
  'GET /v1/orders/{id}/items/{item}': 4,
  'GET /v1/orders/{id}/items/latest': 6,
  'POST /v1/orders/{id}': 0
}

const routeCost = (costs: Record<string, number>, method: string, path: string) => routeCostOf(costs, method, path).cost

describe('routeCostOf', () => {
  it('charges the route its costs name exactly, before any template', () => {
    expect(routeCost({ ...costs, 'GET /v1/orders/7': 9 }, 'GET', '/v1/orders/7')).toBe(9)
    expect(routeCost(costs, 'GET', '/v1/orders')).toBe(2)
  })

  it('charges a template whose parameters stand for one non-empty segment each, of the same method', () => {
    expect(routeCost(costs, 'GET', '/v1/orders/7')).toBe(3)
    expect(routeCost(costs, 'POST', '/v1/orders/7')).toBe(0)
    expect(routeCost(costs, 'GET', '/v1/orders/7/items/2')).toBe(4)
    expect(routeCost(costs, 'DELETE', '/v1/orders/7')).toBe(1)
    expect(routeCost(costs, 'GET', '/v1/orders/')).toBe(1)
    expect(routeCost(costs, 'GET', '/v1/orders/7/8')).toBe(1)
    expect(routeCost(costs, 'GET', '/v2/orders/7')).toBe(1)
  })

  it('prefers the template with more literal segments, whatever the order of the costs', () => {
    expect(routeCost(costs, 'GET', '/v1/orders/7/items/latest')).toBe(6)
    const reversed = Object.fromEntries(Object.entries(costs).reverse())
    expect(routeCost(reversed, 'GET', '/v1/orders/7/items/latest')).toBe(6)
  })

  it('charges 1 for a route no cost names', () => {
    expect(routeCost({}, 'GET', '/anything')).toBe(1)
  })

  it('names the cost that set the charge, by which usage is reported: the exact route, the template, or none', () => {
    expect(routeCostOf(costs, 'GET', '/v1/orders')).toEqual({ route: 'GET /v1/orders', cost: 2 })
    expect(routeCostOf(costs, 'GET', '/v1/orders/7/items/latest')).toEqual({
      route: 'GET /v1/orders/{id}/items/latest',
      cost: 6
    })
    expect(routeCostOf(costs, 'GET', '/v1/orders/7/items/2')).toEqual({
      route: 'GET /v1/orders/{id}/items/{item}',
      cost: 4
    })
    expect(routeCostOf(costs, 'DELETE', '/v1/orders/7')).toEqual({ route: undefined, cost: 1 })
  })
})

describe('requestPath', () => {
  it('drops the query and the fragment, and keeps percent-encoding as sent', () => {
    expect(requestPath('/v1/orders?page=2')).toBe('/v1/orders')
    expect(requestPath('/v1/orders#top')).toBe('/v1/orders')
    expect(requestPath('/v1/a%2Fb')).toBe('/v1/a%2Fb')
  })
})

describe('ROUTE_NAME', () => {
  it('takes a method in capitals, one space and a path from /', () => {
    expect(ROUTE_NAME.test('GET /v1/orders/{id}')).toBe(true)
    for (const name of ['get /v1/orders', 'GET v1/orders', 'GET  /v1', 'GET /v1 orders', 'GET']) {
      expect(ROUTE_NAME.test(name), name).toBe(false)
    }
  })
})

import { describe, expect, it } from 'vitest'
import { href, parseRoute } from '../../console/src/routes.js'

describe("the console's pages by address", () => {
  it.each([
    ['', { page: 'keys', query: '' }],
    ['#/', { page: 'keys', query: '' }],
    ['#/keys', { page: 'keys', query: '' }],
    ['#/keys?cursor=abc', { page: 'keys', query: 'cursor=abc' }],
    ['#/keys/42', { page: 'key', id: '42' }],
    ['#/accounts?externalId=acme', { page: 'accounts', query: 'externalId=acme' }],
    ['#/accounts/7', { page: 'account', id: '7' }],
    ['#/events?accountId=7&keyId=42', { page: 'events', query: 'accountId=7&keyId=42' }],
    ['#/events/3', { page: 'missing' }],
    ['#/webhooks', { page: 'webhooks', query: '' }],
    ['#/webhooks/9?status=failed', { page: 'webhook', id: '9', query: 'status=failed' }],
    ['#/webhooks/9/deliveries', { page: 'missing' }],
    ['#/keys/42/usage', { page: 'missing' }],
    ['#/pets', { page: 'missing' }]
  ])('reads %j as %j', (hash, expected) => {
    const route = parseRoute(hash)
    expect('query' in route ? { ...route, query: route.query.toString() } : route).toEqual(expected)
  })

  it('writes addresses without empty filters', () => {
    expect(href('/events', { accountId: '7', keyId: '', cursor: undefined })).toBe('#/events?accountId=7')
    expect(href('/keys')).toBe('#/keys')
    expect(parseRoute(href('/accounts', { externalId: 'a b&c' }))).toMatchObject({ page: 'accounts' })
    const route = parseRoute(href('/accounts', { externalId: 'a b&c' }))
    expect(route.page === 'accounts' && route.query.get('externalId')).toBe('a b&c')
  })
})

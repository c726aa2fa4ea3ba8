import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { messageId, newWebhookSecret, signedHeaders, webhookPayload } from '../../../src/webhooks/signing.js'
import { retryDelaySeconds } from '../../../src/webhooks/worker.js'

describe('retryDelaySeconds', () => {
  it('starts at about a second and doubles, spread by a quarter either way, never past 10 minutes', () => {
    const middle = () => 0.5
    expect([1, 2, 3, 4, 5, 10, 11, 30].map((attempts) => retryDelaySeconds(attempts, middle))).toEqual([
      1, 2, 4, 8, 16, 512, 600, 600
    ])
    expect(retryDelaySeconds(1, () => 0)).toBe(0.75)
    expect(retryDelaySeconds(1, () => 1)).toBe(1.25)
    expect(retryDelaySeconds(10, () => 1)).toBe(600)
    expect(retryDelaySeconds(10, () => 0)).toBe(384)
  })
})

describe('signing', () => {
  it('makes payloads and headers that the standardwebhooks package verifies, with either secret during a rotation', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()]
    expect(current).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const payload = webhookPayload({
      type: 'key.created',
      at: new Date('2026-11-26T10:00:00Z'),
      data: '{"key":{"id":"12"}}'
    })
    const headers = signedHeaders([current, previous], messageId(42n), new Date(), payload)
    expect(headers['webhook-id']).toBe('evt_42')
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(payload, headers)).toEqual({
        type: 'key.created',
        timestamp: '2026-11-26T10:00:00.000Z',
        data: { key: { id: '12' } }
      })
    }
    expect(() => new Webhook(newWebhookSecret()).verify(payload, headers)).toThrow()
  })
})

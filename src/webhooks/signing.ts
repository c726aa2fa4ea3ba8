import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'

/** A new endpoint secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** The message id of an event, the same on every delivery and redelivery of it. */
export const messageId = (eventId: bigint) => `evt_${eventId}`

/** The body of a delivery: `{"type", "timestamp", "data"}`, the event's data as stored. */
export function webhookPayload(event: { type: string; at: Date; data: string }): string {
  return `{"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(event.at.toISOString())},"data":${event.data}}`
}

/**
 * The Standard Webhooks headers of one delivery. With two secrets (a rotation's grace), the
 * signature header carries both signatures, and a receiver with either secret accepts it.
 */
export function signedHeaders(secrets: string[], id: string, sentAt: Date, payload: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(id, sentAt, payload)).join(' ')
  }
}

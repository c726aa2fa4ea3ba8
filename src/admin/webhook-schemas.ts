import { Type } from '@sinclair/typebox'
import { Int64 } from '../schemas/int64.js'
import { STORABLE_TEXT } from '../schemas/pets.js'
import { Ref } from '../schemas/ref.js'
import { LONGEST_GRACE_SECONDS } from '../services/rules.js'
import { WEBHOOK_EVENT_TYPES } from '../services/webhooks.js'
import { Instant } from '../schemas/instant.js'

const nullableInstant = (description: string) => Type.Union([Instant(description), Type.Null()])
const cursor = Type.String({
  minLength: 1,
  maxLength: 512,
  description: 'Opaque position from a `Link: rel="next"` header of the same listing'
})
const pageSize = (what: string) =>
  Type.Integer({ minimum: 1, maximum: 100, default: 20, description: `${what} a page` })

const WebhookEventType = Type.Unsafe<(typeof WEBHOOK_EVENT_TYPES)[number]>({
  $id: 'WebhookEventType',
  type: 'string',
  enum: [...WEBHOOK_EVENT_TYPES],
  title: 'WebhookEventType',
  description: 'A kind of event; docs/webhooks.md gives the data of each'
})
const events = Type.Array(Ref(WebhookEventType), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The event types sent to the endpoint'
})
const url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'https to a public address (WEBHOOKS_ALLOW_HTTP allows http and loopback; WEBHOOKS_ALLOWED_CIDRS private ranges); a name is resolved and checked again at each delivery'
})
const description = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: STORABLE_TEXT,
  description: 'A label for the endpoint; no control characters or bidirectional overrides'
})

export const WebhookEndpoint = Type.Object(
  {
    id: Int64({ description: 'The endpoint' }),
    url: Type.String({ description: 'Where deliveries are POSTed' }),
    events,
    description: Type.Union([description, Type.Null()]),
    paused: Type.Boolean({ description: 'Paused endpoints receive nothing; their deliveries wait until resumed' }),
    pausedAt: nullableInstant('When it was paused, after an hour of failures or by an operator'),
    failingSince: nullableInstant('The first failed attempt since the last delivered one'),
    previousSecretUntil: nullableInstant('While a rotated secret still signs too: until when'),
    createdAt: Instant('When it was registered'),
    updatedAt: Instant('When it last changed')
  },
  { $id: 'WebhookEndpoint', title: 'WebhookEndpoint', additionalProperties: false }
)

/** An endpoint just made, or whose secret was just rotated, with the secret: shown this once. */
export const WebhookEndpointWithSecret = Type.Composite(
  [
    WebhookEndpoint,
    Type.Object({
      secret: Type.String({
        description: 'The signing secret (Standard Webhooks, `whsec_` and base64), shown only this once',
        examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']
      })
    })
  ],
  { $id: 'WebhookEndpointWithSecret', title: 'WebhookEndpointWithSecret', additionalProperties: false }
)

export const NewWebhookEndpoint = Type.Object(
  { url, events, description: Type.Optional(description) },
  { $id: 'NewWebhookEndpoint', title: 'NewWebhookEndpoint', additionalProperties: false }
)

export const WebhookEndpointChanges = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    description: Type.Optional(Type.Union([description, Type.Null()])),
    paused: Type.Optional(
      Type.Boolean({ description: 'true pauses the endpoint; false resumes it, its failures forgotten' })
    )
  },
  { $id: 'WebhookEndpointChanges', title: 'WebhookEndpointChanges', additionalProperties: false, minProperties: 1 }
)

export const SecretRotation = Type.Object(
  {
    graceSeconds: Type.Optional(
      Int64({
        minimum: 0,
        maximum: LONGEST_GRACE_SECONDS,
        description:
          'How long the previous secret keeps signing beside the new one, 86400 (a day) when absent; 0 ends it now'
      })
    )
  },
  { $id: 'SecretRotation', title: 'SecretRotation', additionalProperties: false }
)

export const WebhookParams = Type.Object({ id: Int64({ description: 'The endpoint' }) })
export const DeliveryParams = Type.Object({
  id: Int64({ description: 'The endpoint' }),
  eventId: Int64({ description: 'The event delivered' })
})

export const WebhookListQuery = Type.Object({
  limit: Type.Optional(pageSize('Endpoints')),
  cursor: Type.Optional(cursor)
})

const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
  description: 'pending: waiting or being retried; delivered: answered 2xx; failed: given up after 24 hours of attempts'
})

export const DeliveryListQuery = Type.Object({
  status: Type.Optional(DeliveryStatus),
  limit: Type.Optional(pageSize('Deliveries')),
  cursor: Type.Optional(cursor)
})

export const WebhookDelivery = Type.Object(
  {
    eventId: Int64({ description: 'The event; also the webhook-id, as `evt_<eventId>`' }),
    type: Type.String({ description: 'The event type' }),
    status: DeliveryStatus,
    attempts: Type.Integer({ description: 'Attempts made so far' }),
    createdAt: Instant('When the event was fanned out to this endpoint; its 24 hours count from here'),
    nextAttemptAt: nullableInstant('When a pending delivery is tried next'),
    lastAttemptAt: nullableInstant('When it was last tried'),
    lastStatus: Type.Union([Type.Integer(), Type.Null()], {
      description: "The last answer's HTTP status; null when none came"
    }),
    lastResponse: Type.Union([Type.String(), Type.Null()], {
      description: "The start of the last answer's body (1 KiB), or why no answer came"
    }),
    finishedAt: nullableInstant('When it was delivered or given up')
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery', additionalProperties: false }
)

export const webhookComponents = [
  WebhookEventType,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  NewWebhookEndpoint,
  WebhookEndpointChanges,
  SecretRotation,
  WebhookDelivery
]

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { webhookAddressPolicy } from '../config.js'
import { getServiceSecret } from '../repositories/service-secrets.js'
import { Ref } from '../schemas/ref.js'
import {
  changeEndpoint,
  createEndpoint,
  deleteEndpoint,
  describeDelivery,
  describeEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  retryDelivery,
  rotateEndpointSecret
} from '../services/webhooks.js'
import { actorOf, errors, invalid, json, nextLink } from './common.js'
import { listingCursors } from '../pagination.js'
import { AuditActorHeaders } from './schemas.js'
import {
  DeliveryListQuery,
  DeliveryParams,
  NewWebhookEndpoint,
  SecretRotation,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookEndpointWithSecret,
  WebhookListQuery,
  WebhookParams
} from './webhook-schemas.js'

const unknownEndpoint: [number, string] = [404, '`not_found`: no webhook endpoint has this id']

/** Webhook endpoints and their deliveries, under /admin/v1. One service call each. */
const webhooks: FastifyPluginAsyncTypebox = async (app) => {
  const { db, config } = app
  const policy = webhookAddressPolicy(config)
  const secret = await getServiceSecret(db, 'cursor')
  const endpointCursors = listingCursors(secret, 'webhooks')

  app.post(
    '/webhooks',
    {
      // Where the service's events go, and the secret that vouches for them: an admin's decision.
      config: { adminRole: 'admin' },
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint; its signing secret is shown only in this answer',
        description:
          'Events of the types named are POSTed to the URL, signed per Standard Webhooks, from the moment it is ' +
          'registered. The URL is checked now and, after DNS resolution, at every delivery.',
        headers: AuditActorHeaders,
        body: Ref(NewWebhookEndpoint),
        response: { 201: json('The endpoint, with its secret', Ref(WebhookEndpointWithSecret)), ...errors(invalid) }
      }
    },
    async (request, reply) => {
      const made = await createEndpoint(db, actorOf(request), request.body, policy)
      return reply.code(201).send({ ...describeEndpoint(made.endpoint), secret: made.secret })
    }
  )

  app.get(
    '/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: 'Webhook endpoints in ascending id order; while more follow, `Link: rel="next"` gives the next page',
        querystring: WebhookListQuery,
        response: { 200: json('A page of endpoints', Type.Array(Ref(WebhookEndpoint))), ...errors(invalid) }
      }
    },
    async (request, reply) => {
      const { limit = 20, cursor } = request.query
      const afterId = cursor === undefined ? undefined : endpointCursors.decode(cursor, undefined)
      const page = await listEndpoints(db, { limit, afterId })
      if (page.hasMore) {
        const next = endpointCursors.encode({ afterId: page.endpoints.at(-1)!.id, status: undefined })
        reply.header('link', nextLink(config.ADMIN_PUBLIC_URL, '/webhooks', { limit: String(limit), cursor: next }))
      }
      return page.endpoints.map(describeEndpoint)
    }
  )

  app.get(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        summary: 'One webhook endpoint, never its secret',
        params: WebhookParams,
        response: { 200: json('The endpoint', Ref(WebhookEndpoint)), ...errors(invalid, unknownEndpoint) }
      }
    },
    async (request) => describeEndpoint(await getEndpoint(db, request.params.id))
  )

  app.patch(
    '/webhooks/:id',
    {
      // Where the service's events go, and the secret that vouches for them: an admin's decision.
      config: { adminRole: 'admin' },
      schema: {
        operationId: 'changeWebhook',
        summary: 'Change a webhook endpoint: its URL, events or description; pause or resume it',
        description: 'Resuming an endpoint sends what waited while it was paused, in order.',
        headers: AuditActorHeaders,
        params: WebhookParams,
        body: Ref(WebhookEndpointChanges),
        response: { 200: json('The endpoint as changed', Ref(WebhookEndpoint)), ...errors(invalid, unknownEndpoint) }
      }
    },
    async (request) =>
      describeEndpoint(await changeEndpoint(db, actorOf(request), request.params.id, request.body, policy))
  )

  app.delete(
    '/webhooks/:id',
    {
      // Where the service's events go, and the secret that vouches for them: an admin's decision.
      config: { adminRole: 'admin' },
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint and its deliveries, sent or not',
        headers: AuditActorHeaders,
        params: WebhookParams,
        response: { 204: { description: 'Deleted', type: 'null' }, ...errors(invalid, unknownEndpoint) }
      }
    },
    async (request, reply) => {
      await deleteEndpoint(db, actorOf(request), request.params.id)
      return reply.code(204).send()
    }
  )

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      // Where the service's events go, and the secret that vouches for them: an admin's decision.
      config: { adminRole: 'admin', optionalBody: true },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Give an endpoint a new signing secret, shown only in this answer',
        description:
          'During the grace period (a day unless `graceSeconds` says otherwise) every delivery carries two ' +
          'signatures, by the new secret and the previous one, so the receiver can switch at any moment in it.',
        headers: AuditActorHeaders,
        params: WebhookParams,
        body: Ref(SecretRotation),
        response: {
          200: json('The endpoint, with its new secret', Ref(WebhookEndpointWithSecret)),
          ...errors(invalid, unknownEndpoint)
        }
      }
    },
    async (request) => {
      const grace = request.body.graceSeconds === undefined ? undefined : Number(request.body.graceSeconds)
      const rotated = await rotateEndpointSecret(db, actorOf(request), request.params.id, grace)
      return { ...describeEndpoint(rotated.endpoint), secret: rotated.secret }
    }
  )

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's deliveries, newest first, each with its last answer",
        description: 'While more follow, `Link: rel="next"` gives the next page.',
        params: WebhookParams,
        querystring: DeliveryListQuery,
        response: {
          200: json('A page of deliveries', Type.Array(Ref(WebhookDelivery))),
          ...errors(invalid, unknownEndpoint)
        }
      }
    },
    async (request, reply) => {
      const { id } = request.params
      const { status, limit = 20, cursor } = request.query
      const cursors = listingCursors(secret, `webhooks/${id}/deliveries?status=${status ?? ''}`)
      const beforeEventId = cursor === undefined ? undefined : cursors.decode(cursor, undefined)
      const page = await listDeliveries(db, id, { status, limit, beforeEventId })
      if (page.hasMore) {
        const next = cursors.encode({ afterId: page.deliveries.at(-1)!.eventId, status: undefined })
        const query = { status, limit: String(limit), cursor: next }
        reply.header('link', nextLink(config.ADMIN_PUBLIC_URL, `/webhooks/${id}/deliveries`, query))
      }
      return page.deliveries.map(describeDelivery)
    }
  )

  app.post(
    '/webhooks/:id/deliveries/:eventId/retry',
    {
      // Sending the service's events again is, like where they go, an admin's decision.
      config: { adminRole: 'admin' },
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Send a failed delivery again, with 24 hours of attempts afresh',
        headers: AuditActorHeaders,
        params: DeliveryParams,
        response: { 204: { description: 'Pending again', type: 'null' }, ...errors(invalid, unknownEndpoint) }
      }
    },
    async (request, reply) => {
      await retryDelivery(db, actorOf(request), request.params.id, request.params.eventId)
      return reply.code(204).send()
    }
  )
}

export default webhooks

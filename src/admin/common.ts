import type { TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { ErrorBody } from '../schemas/error.js'
import { Ref } from '../schemas/ref.js'
import type { Actor } from '../services/rules.js'

/**
 * Who makes the change: the operator the token authenticated, never a header. X-Audit-Actor (validated
 * by the route's schema), if sent, is whom it was made for, kept beside the actor as `onBehalfOf`.
 */
export function actorOf(request: FastifyRequest): Actor {
  const header = request.headers['x-audit-actor']
  return {
    actor: request.operator!.actor,
    onBehalfOf: typeof header === 'string' ? header : null,
    requestId: request.id,
    credential: request.operator!.credential
  }
}

/** A JSON response as both Fastify (which serializes by `content`) and @fastify/swagger read it. */
export const json = (description: string, schema: TSchema) => ({
  description,
  content: { 'application/json': { schema } }
})

export const errors = (...statuses: [number, string][]) =>
  Object.fromEntries([
    ...statuses.map(([status, description]) => [status, json(description, Ref(ErrorBody))]),
    [401, json('`unauthorized`: the token is missing or wrong', Ref(ErrorBody))],
    [403, json("`insufficient_role`: the operator's role may not do this", Ref(ErrorBody))],
    [429, json('`rate_limited`: too many failed attempts from this address; every request waits', Ref(ErrorBody))],
    [503, json('`service_unavailable`: the database cannot be reached', Ref(ErrorBody))]
  ])
export const invalid: [number, string] = [
  400,
  '`invalid_request`: a value fails validation; the message names the field'
]
export const unknownAccount: [number, string] = [404, '`not_found`: no account has this id']

/** A plan's own limits as a request body gives them (int64), as the services take them. */
export const planLimits = (body: { perMinute?: bigint; perDay?: bigint }) => ({
  perMinute: body.perMinute === undefined ? undefined : Number(body.perMinute),
  perDay: body.perDay === undefined ? undefined : Number(body.perDay)
})

/**
 * The Link header to the next page: under ADMIN_PUBLIC_URL when it is set, else a reference relative
 * to the request's own URL (RFC 8288), never built from the request's Host header.
 */
export function nextLink(publicUrl: string | undefined, path: string, query: Record<string, string | undefined>) {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value)
  return `<${publicUrl ?? ''}/admin/v1${path}?${search.toString()}>; rel="next"`
}

import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'
import fp from 'fastify-plugin'
import { trustedProxies } from '../../config.js'

export const REQUEST_ID_HEADER = 'x-request-id'

// Long enough for a UUID or a tracing id, and nothing that could forge a log line.
const WELL_FORMED_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Whether TRUST_PROXY believes what the directly connected peer says in forwarded headers. */
function trustsPeer(trustProxy: string): (address: string) => boolean {
  const proxies = trustedProxies(trustProxy)
  if (proxies.length === 0) return () => false
  const trusts = proxyAddr.compile(proxies)
  return (address) => trusts(address, 0)
}

/**
 * Fastify's `genReqId`: the load balancer's X-Request-Id when TRUST_PROXY trusts the peer that sent
 * it and it is well formed, otherwise a fresh UUID.
 */
export function requestIdGenerator(trustProxy: string): (request: IncomingMessage) => string {
  const trusted = trustsPeer(trustProxy)
  return (request) => {
    const offered = request.headers[REQUEST_ID_HEADER]
    const address = request.socket?.remoteAddress
    if (typeof offered === 'string' && WELL_FORMED_ID.test(offered) && address && trusted(address)) return offered
    return randomUUID()
  }
}

/** Echoes the request id on every response, errors and 404s included, so a client can quote it. */
export default fp(
  async (app) => {
    // No database round trip.
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header(REQUEST_ID_HEADER, request.id)
      done(null, payload)
    })
  },
  { name: 'request-id' }
)

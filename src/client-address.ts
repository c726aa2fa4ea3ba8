import { isIP } from 'node:net'
import type { FastifyRequest } from 'fastify'

/**
 * The client's address: Fastify's `request.ip`, which follows X-Forwarded-For back through the
 * peers TRUST_PROXY lists, when it is an IP address. Anything else a trusted proxy passed on (a
 * name, `unknown`, an address with a port or a zone, any text) is not an address: the connecting
 * peer's address stands instead, so a rate-limit subject is always an address of bounded length.
 */
export function clientAddress(request: Pick<FastifyRequest, 'ip' | 'socket'>): string {
  const address = request.ip
  if (isIP(address) !== 0 && !address.includes('%')) return address
  return request.socket.remoteAddress ?? ''
}

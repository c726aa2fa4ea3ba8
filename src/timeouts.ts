import type { ServerOptions } from 'node:http'
import type { FastifyServerOptions } from 'fastify'
import type { Config } from './config.js'

// How often Node checks the headers and request timeouts; its default of 30 s would blur both.
const TIMEOUT_CHECK_INTERVAL_MS = 1000

/**
 * The HTTP server's timeouts and size limits, so a slow, silent or oversized client cannot hold a
 * connection forever or make the server buffer without bound, and how it reads repeated headers.
 */
export function serverTimeouts(
  config: Config
): Pick<FastifyServerOptions, 'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout'> & { http: ServerOptions } {
  return {
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: config.CONNECTION_TIMEOUT_MS,
    http: {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      requestTimeout: config.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_INTERVAL_MS, config.HEADERS_TIMEOUT_MS),
      maxHeaderSize: config.MAX_HEADER_BYTES,
      // Node would answer a missing Host with a bare 400; the errors plugin answers it with the Error body.
      requireHostHeader: false,
      // Node would keep the first of two Authorization headers and drop the other; joined ("Bearer a,
      // Bearer b") they are no bearer token, so such a request is a 401 whichever of them is valid.
      joinDuplicateHeaders: true
    }
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'

type Directives = Record<string, string[]>

// API responses are data: nothing in them may load, run, be framed or post anywhere.
const API_POLICY: Directives = {
  'default-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"]
}

/**
 * The docs page, where people paste a key into "Authorize": everything from its own origin (it
 * loads nothing from outside), images also as data: URIs (Swagger UI's stylesheet icons), no
 * inline scripts or styles, never framed.
 */
const DOCS_POLICY: Directives = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"]
}

/**
 * The admin console, where an operator signs in with the admin token: its script, stylesheet and
 * calls from its own origin only, nothing inline, no forms posted anywhere, never framed.
 */
const CONSOLE_POLICY: Directives = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'connect-src': ["'self'"],
  'base-uri': ["'none'"],
  'form-action': ["'none'"],
  'frame-ancestors': ["'none'"]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The documentation's own Content-Security-Policy instead of the API's. */
    documentation?: boolean
    /** The admin console's own Content-Security-Policy instead of the API's. */
    console?: boolean
    /** Its responses are the same for everyone, so caches may store them; otherwise Cache-Control: no-store. */
    cacheable?: boolean
  }
}

const contentSecurityPolicy = (directives: Directives) => ({ useDefaults: false, directives })

const API_HEADERS: HelmetOptions = {
  contentSecurityPolicy: contentSecurityPolicy(API_POLICY),
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  // A JSON response is never a document a browser renders: the headers about how a document may be
  // embedded, isolated or prefetched do nothing there, and each costs every response its validation.
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false
}

const DOCS_HEADERS: HelmetOptions = {
  contentSecurityPolicy: contentSecurityPolicy(DOCS_POLICY),
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' }
}

const CONSOLE_HEADERS: HelmetOptions = { ...DOCS_HEADERS, contentSecurityPolicy: contentSecurityPolicy(CONSOLE_POLICY) }

/**
 * The headers helmet sets for a policy, recorded once from a response that is never sent. Its
 * middleware would set them on every response through Node's setHeader(), which also sends every
 * other header of the response down Node's slower path; as a constant set they go out with the rest.
 */
function recordHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: string) => {
      headers[name.toLowerCase()] = value
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()]
    }
  }
  // Fixed policies are applied synchronously and never fail: helmet reports errors only from
  // directives computed per request.
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error
  })
  return headers
}

/** The headers of an API response, for an answer made before routing too. */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = recordHeaders(API_HEADERS)

/**
 * Security headers on every response that goes through routing, from helmet: nosniff, the API's
 * Content-Security-Policy (the documentation and the admin console have their own, and helmet's
 * headers for documents), X-Frame-Options DENY, Referrer-Policy no-referrer and HSTS. Responses of
 * routes not marked `cacheable` (the documentation is) are never stored by a cache: they belong to one key.
 * No database round trip.
 */
export default fp(
  async (app) => {
    const api = API_SECURITY_HEADERS
    const documentation = recordHeaders(DOCS_HEADERS)
    const operatorConsole = recordHeaders(CONSOLE_HEADERS)
    app.addHook('onRequest', (request, reply, done) => {
      const { config } = request.routeOptions
      reply.headers(config.documentation === true ? documentation : config.console === true ? operatorConsole : api)
      if (config.cacheable !== true) reply.header('cache-control', 'no-store')
      done()
    })
  },
  { name: 'security-headers' }
)

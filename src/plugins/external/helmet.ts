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

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The documentation's own Content-Security-Policy instead of the API's. */
    documentation?: boolean
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

/**
 * Security headers on every response that goes through routing, from helmet: nosniff, the API's
 * Content-Security-Policy (the documentation has its own, and helmet's headers for documents),
 * X-Frame-Options DENY, Referrer-Policy no-referrer and HSTS. Responses other than the public
 * documentation are never stored by a cache: they belong to one key.
 * helmet's middleware is built once per policy (@fastify/helmet builds it again on every request).
 * No database round trip.
 */
export default fp(
  async (app) => {
    const api = helmet(API_HEADERS)
    const documentation = helmet(DOCS_HEADERS)
    app.addHook('onRequest', (request, reply, done) => {
      const { config } = request.routeOptions
      if (config.public !== true) reply.header('cache-control', 'no-store')
      // Fixed policies never fail: helmet reports errors only from directives computed per request.
      ;(config.documentation === true ? documentation : api)(request.raw, reply.raw, () => done())
    })
  },
  { name: 'security-headers' }
)

import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { bearerToken } from '../../auth/bearer-token.js'
import { clientAddress } from '../../client-address.js'
import { ServiceTokens } from '../../auth/service-tokens.js'
import { ApiError, insufficientScope, invalidRequest, REALM, unauthorized } from '../../errors.js'
import { localAddressStore } from '../../limits/address-store.js'
import { limitDecisions, type PublishedDecision } from '../../limits/decision-channel.js'
import { rateLimitHeaders, type RateLimitHeaders } from '../../limits/headers.js'
import type { Decision } from '../../limits/rate-limiter.js'
import { bindingWindow, refusingWindow, type WindowState } from '../../limits/windows.js'
import type { OperatorRole, Scope } from '../../db/schema.js'
import { requestPath, routeCostOf, UNNAMED_ROUTE } from '../../limits/route-costs.js'
import type { AuthenticatedKey } from '../../auth/key-cache.js'
import { retryAfterSeconds } from './limiter.js'
import type { UnkeyedCeiling } from './shedding.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key, with its account's plan and limits. */
    apiKey: AuthenticatedKey | null
  }
  interface FastifyContextConfig {
    /** Served without a key, on the client address's budget (documentation). */
    keyless?: boolean
    /** Needs a valid key, but neither counts against its windows nor is refused by them. */
    uncounted?: boolean
    /** The scope a key needs here; a key without it is refused with 403 after it is counted. */
    scope?: Scope
    /** Called by other services with an operator token of this role instead of a key; the route charges keys itself. */
    operatorRole?: OperatorRole
    /**
     * Charges, at its cost, the request a proxy holds instead of this one: named by X-Original-Method
     * and X-Original-URI (`headers`), or this request's own method and its path after the route's `/*` (`path`).
     */
    original?: 'headers' | 'path'
  }
}

const HTTP_METHOD = /^[A-Z]{1,16}$/

/** The limit a refusal waits for, as its message names it: `60 a minute`, `the minute bucket of 10`. */
function refusingLimit(decision: Exclude<Decision, { outcome: 'admitted' }>): string {
  const { windows, retryAt } = decision
  if (windows.length === 0) return ''
  // Of the windows that end when a retry can succeed (a minute ends with its day and month), the one
  // with the fewest units left: short of room, as the headers say.
  const waitedFor = windows.filter((candidate) => candidate.resetAt === retryAt)
  const window = waitedFor.length > 0 ? bindingWindow(waitedFor) : refusingWindow(windows)
  return window.algorithm === 'bucket'
    ? `: the ${window.name} bucket of ${window.limit}`
    : `: ${window.limit} a ${window.name}`
}

function refusal(decision: Exclude<Decision, { outcome: 'admitted' }>, now: number): ApiError {
  const seconds = retryAfterSeconds(decision, now)
  const retry = seconds === undefined ? '' : `; retry in ${seconds} s`
  const message = {
    key_banned: `This API key is banned for sending requests while rate limited${retry}`,
    rate_limited: `Rate limit exceeded${refusingLimit(decision)}${retry}`,
    credits_exhausted: `This account's credits are spent${seconds === undefined ? '' : `; they refill in ${seconds} s`}`
  }[decision.outcome]
  return new ApiError(decision.outcome, message, seconds === undefined ? {} : { 'retry-after': String(seconds) })
}

/** `POST /v1/pets/{petId}`: a route as the OpenAPI document and a plan's costs name it. */
const routeNames = new Map<string, string>()
function routeName(request: FastifyRequest, method = request.method): string {
  const id = `${method} ${request.routeOptions.url ?? ''}`
  let name = routeNames.get(id)
  if (name === undefined) {
    name = id.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    routeNames.set(id, name)
  }
  return name
}

const MINUTE_MS = 60_000

/** The client address as the budget of requests without a valid key knows it; IPv6 grouped by /64. */
const addressKey = (request: FastifyRequest) => normalizeIP(clientAddress(request))

/** The end of the minute a budget's store key (`address minute`) counts in, in epoch ms. */
const minuteEndOf = (storeKey: string) => (Number(storeKey.slice(storeKey.lastIndexOf(' ') + 1)) + 1) * MINUTE_MS

/** The method and path of the request nginx's auth_request or Envoy's ext_authz holds. */
function originalRequest(request: FastifyRequest, from: 'headers' | 'path'): { method: string; path: string } {
  // Envoy's check carries the request's own method, and its path behind the prefix it is given: the
  // route's `/*`, kept as sent (a wildcard parameter is decoded).
  if (from === 'path') {
    const prefix = request.routeOptions.url!.slice(0, -'/*'.length)
    return { method: request.method, path: requestPath(request.url.slice(prefix.length)) }
  }
  const method = request.headers['x-original-method']
  const uri = request.headers['x-original-uri']
  if (typeof method !== 'string' || !HTTP_METHOD.test(method)) {
    throw invalidRequest('X-Original-Method must name the method of the request to authorize, such as GET')
  }
  if (typeof uri !== 'string' || !uri.startsWith('/')) {
    throw invalidRequest('X-Original-URI must be the path of the request to authorize, starting with /')
  }
  return { method, path: requestPath(uri) }
}

/** Tells tracing, when it listens, what the limiter decided. */
function publishDecision(decision: Decision, headers: RateLimitHeaders | undefined) {
  if (limitDecisions.hasSubscribers) {
    limitDecisions.publish({
      outcome: decision.outcome,
      policy: headers?.['ratelimit-policy']
    } satisfies PublishedDecision)
  }
}

const addressNotAllowed = (address: string) =>
  new ApiError('address_not_allowed', `This API key may not be used from ${address}`)

/**
 * The budget of requests without a valid key, counted in this instance's memory: @fastify/rate-limit
 * keys it by the client address (X-Forwarded-For only from TRUST_PROXY's peers and only when an IP
 * address; IPv6 grouped by /64) and the UTC minute on the database's clock, as every window is, in
 * its local store, least recently seen entries dropped past the cap. Its own headers are off: the
 * service's carry an absolute reset.
 */
async function addressBudget(app: FastifyInstance, ceiling: UnkeyedCeiling, now: () => number) {
  const { config, metrics } = app
  await app.register(rateLimit, {
    global: false,
    max: config.UNAUTHENTICATED_PER_MINUTE,
    // The minute is in the key, so an entry is never read in another minute: a minute's lifetime, on the
    // store's clock, only lets it go. Reckoned to the minute's end, it ended early under a held database clock.
    timeWindow: MINUTE_MS,
    store: localAddressStore(config.UNAUTHENTICATED_ADDRESSES),
    keyGenerator: (request) => `${addressKey(request)} ${Math.floor(now() / MINUTE_MS)}`,
    skipOnError: false
  })
  const checkAddress = app.createRateLimit()
  metrics.watchShedding(ceiling)

  return {
    /** Counts the request against its client address's budget; throws the 429 when that is spent. */
    async charge(request: FastifyRequest, reply: FastifyReply) {
      // Past the instance's ceiling a request is shed before its address is counted.
      await ceiling.pass(request.raw)
      const result = await checkAddress(request)
      // `isAllowed` means "on the allow list", which is empty here: every result carries the figures.
      if (result.isAllowed) return
      const resetAt = minuteEndOf(result.key)
      const minute: WindowState = {
        name: 'minute',
        algorithm: 'fixed',
        limit: result.max,
        remaining: result.remaining,
        resetAt
      }
      const decision: Decision = result.isExceeded
        ? { outcome: 'rate_limited', windows: [minute], credits: null, retryAt: resetAt, newlyBanned: false }
        : { outcome: 'admitted', windows: [minute], credits: null }
      const at = now()
      const headers = rateLimitHeaders(decision, at)!
      reply.headers(headers)
      publishDecision(decision, headers)
      if (decision.outcome !== 'admitted') {
        metrics.rateLimitRefusals.inc({ reason: decision.outcome })
        throw refusal(decision, at)
      }
    },

    /** Whether the address has spent its budget, without counting this request. */
    async spent(request: FastifyRequest) {
      const result = await checkAddress(request, { increment: false })
      return !result.isAllowed && result.remaining === 0
    }
  }
}

/**
 * Applies the limiter's decision to the reply: sets the rate-limit headers. Returns the refusal to
 * throw (the 429, or the 403 for a key without the route's scope), or undefined when the request goes on.
 */
function applyDecision(
  request: FastifyRequest,
  reply: FastifyReply,
  key: AuthenticatedKey,
  decision: Decision,
  now: number
) {
  const headers = rateLimitHeaders(decision, now)
  if (headers) reply.headers(headers)
  publishDecision(decision, headers)
  if (decision.outcome === 'admitted') {
    const scope = request.routeOptions.config.scope
    return scope === undefined || key.scopes.includes(scope) ? undefined : insufficientScope([scope])
  }
  return refusal(decision, now)
}

/**
 * Authentication and rate limits for every request under /v1, in one onRequest hook: authenticate,
 * charge, set the headers, refuse.
 */
export default fp<{ ceiling: UnkeyedCeiling }>(
  async (app, { ceiling }) => {
    const { admission } = app
    app.decorateRequest('apiKey', null)
    const address = await addressBudget(app, ceiling, () => admission.now())
    const services = new ServiceTokens(app.db)
    /** A token the membership filter rules out is looked up only past the instance's ceiling and while its address has budget left. */
    const mayLookUp = (request: FastifyRequest) => async () =>
      ceiling.admit(request.raw) && !(await address.spent(request))

    /** A request without a usable credential: its address pays, and the answer carries the challenge. */
    async function refuseCredential(request: FastifyRequest, reply: FastifyReply, error: ApiError): Promise<never> {
      await address.charge(request, reply)
      const presented = request.headers.authorization !== undefined
      reply.header('www-authenticate', presented ? `${REALM}, error="invalid_token"` : REALM)
      throw error
    }

    /** The operator a route for other services needs (`operatorRole`): no key is charged here, the route does that. */
    async function authenticateOperator(request: FastifyRequest, reply: FastifyReply, role: OperatorRole) {
      const token = bearerToken(request.headers.authorization)
      // An address that has spent its budget on wrong tokens gets its 429 before any lookup.
      if (await address.spent(request)) await address.charge(request, reply)
      const operator = token === undefined ? undefined : await services.identify(token)
      if (!operator) {
        return refuseCredential(
          request,
          reply,
          new ApiError(
            'unauthorized',
            `An operator token of the role ${role} is required: send Authorization: Bearer <token>`
          )
        )
      }
      if (operator.role !== role) {
        throw new ApiError('insufficient_role', `This needs the role ${role}; ${operator.name} is ${operator.role}`)
      }
    }

    // Database round trips: none for a cached key within its lease; a share of one counting statement
    // when the lease runs out; for a key not cached here that the membership filter admits, a share of
    // one statement that finds and counts the first requests due (a key with allowed addresses is
    // found there, and counted after its address is checked; a request to authorize is counted after
    // its lookup, since its cost may need a template of the plan's costs);
    // without a valid key, or from an address its key does not allow, none (the address's budget is in memory);
    // for a service's operator token, one indexed read a second per instance (service-tokens.ts).
    app.addHook('onRequest', async (request, reply) => {
      const route = request.routeOptions.config
      // Documentation needs no key: without one it is the address's, with a valid one the key's, counted once.
      if (route.keyless === true && request.headers.authorization === undefined) return address.charge(request, reply)
      if (route.operatorRole !== undefined) return authenticateOperator(request, reply, route.operatorRole)

      const { banAfter, banSeconds } = admission
      // nginx's auth_request and Envoy's ext_authz ask for the request they are holding, not for this one.
      const original = route.original === undefined ? undefined : originalRequest(request, route.original)
      const counted = route.uncounted !== true
      // A HEAD is its GET without the body: it costs what the plan says the GET costs.
      const pricedAs =
        original === undefined ? routeName(request, request.method === 'HEAD' ? 'GET' : request.method) : ''
      const found = await admission.authenticate(bearerToken(request.headers.authorization), {
        count: counted && original === undefined ? { route: pricedAs, banAfter, banSeconds } : undefined,
        mayLookUp: mayLookUp(request)
      })
      if (!found) {
        return route.keyless === true
          ? address.charge(request, reply)
          : refuseCredential(request, reply, unauthorized())
      }
      const { key } = found
      request.apiKey = key
      // Before anything is counted: from elsewhere the key spends nothing, and its address pays as for no key.
      if (key.allowedFrom && !key.allowedFrom.includes(clientAddress(request))) {
        await address.charge(request, reply)
        throw addressNotAllowed(clientAddress(request))
      }
      if (!counted) return

      let charged: { name: string; cost: number }
      if (original === undefined) {
        charged = { name: routeName(request), cost: key.costs[pricedAs] ?? 1 }
      } else {
        const named = routeCostOf(key.costs, original.method, original.path)
        charged = { name: named.route ?? UNNAMED_ROUTE, cost: named.cost }
      }
      const decision = await admission.charge(key, charged.name, charged.cost, found.counted)
      const refused = applyDecision(request, reply, key, decision, admission.now())
      if (refused) throw refused
    })

    // Closing waits for in-flight requests: the shed ones held are answered now.
    app.addHook('preClose', async () => ceiling.hold.release())
  },
  { name: 'guard', dependencies: ['metrics', 'limiter'] }
)

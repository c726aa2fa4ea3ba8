import type { Kysely, Transaction } from 'kysely'
import pg from 'pg'
import type { Logger } from 'pino'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { Database } from '../db/schema.js'
import {
  claimWebhookEndpoint,
  millisecondsUntilNextDelivery,
  nextPendingDelivery,
  readWebhookBacklog,
  recordDelivered,
  recordFailedAttempt,
  type ClaimedEndpoint
} from '../repositories/webhook-deliveries.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import type { AddressPolicy } from './address-policy.js'
import { sendWebhook, type SendOutcome } from './sender.js'
import { messageId, signedHeaders, webhookPayload } from './signing.js'

/** Deliveries one claim of an endpoint sends before letting go of it, so that others get their turn. */
const DELIVERIES_PER_CLAIM = 20
const FIRST_RETRY_SECONDS = 1
const LONGEST_RETRY_SECONDS = 600
/** How often the backlog's figures are read for the metrics. */
const BACKLOG_EVERY_MS = 15_000
/** Announces deliveries added or made due again (migration 0032). */
const DUE_CHANNEL = 'webhook_deliveries_due'
/** While it listens, an idle worker still looks this often, in case an announcement was lost. */
const IDLE_POLL_MS = 30_000
const RELISTEN_DELAY_MS = 1_000

/**
 * Seconds before the next attempt after `attempts` failed ones: about a second, doubling, each
 * spread by ±25 % so that endpoints failing together do not retry together, never past 10 minutes.
 */
export function retryDelaySeconds(attempts: number, random: () => number): number {
  const base = Math.min(LONGEST_RETRY_SECONDS, FIRST_RETRY_SECONDS * 2 ** Math.max(0, attempts - 1))
  return Math.min(LONGEST_RETRY_SECONDS, base * (0.75 + random() * 0.5))
}

export interface WebhookWorkerOptions {
  /** Connections of the worker's own: each endpoint being sent to holds one for as long as it sends. */
  db: Kysely<Database>
  policy: AddressPolicy
  timeoutMs: number
  /** Endpoints sent to at once. */
  concurrency: number
  /** Between rounds while deliveries are being sent, or always when it does not listen. */
  pollMs?: number
  /**
   * A session to LISTEN on for deliveries added or due again: then an idle worker wakes when told,
   * at a retry's due time, or after 30 s, rather than every `pollMs`.
   */
  listenUrl?: string
  log: Pick<Logger, 'warn' | 'info'>
  registry?: Registry
  random?: () => number
  /** The instant put in `webhook-timestamp`; the database's clock decides every retry and pause. */
  clock?: () => number
}

export interface WebhookWorker {
  /** Sends what is due now, on every endpoint it can claim, until nothing is due; returns the deliveries attempted. */
  drain(): Promise<number>
  /** Stops polling and waits for the sends under way. */
  stop(): Promise<void>
}

type Outcome = 'delivered' | 'retried' | 'failed' | 'refused'

function deliveryMetrics(registry: Registry | undefined) {
  if (!registry) return { count: () => {}, backlog: () => {} }
  const deliveries = new Counter({
    name: 'animal_store_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome: delivered, retried (failed, to be tried again), failed (given up after 24 h), refused (the address policy refused the URL or its address)',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  for (const outcome of ['delivered', 'retried', 'failed', 'refused']) deliveries.inc({ outcome }, 0)
  const pending = new Gauge({
    name: 'animal_store_webhook_backlog',
    help: 'Webhook deliveries waiting to be sent to endpoints that are not paused',
    registers: [registry]
  })
  const oldest = new Gauge({
    name: 'animal_store_webhook_oldest_pending_seconds',
    help: 'Age of the oldest webhook delivery waiting for an endpoint that is not paused; 0 when none waits',
    registers: [registry]
  })
  const paused = new Gauge({
    name: 'animal_store_webhook_endpoints_paused',
    help: 'Webhook endpoints paused after an hour of failures, or by an operator',
    registers: [registry]
  })
  return {
    count: (outcome: Outcome) => deliveries.inc({ outcome }),
    backlog: (figures: { pending: number; oldestSeconds: number; paused: number }) => {
      pending.set(figures.pending)
      oldest.set(figures.oldestSeconds)
      paused.set(figures.paused)
    }
  }
}

/**
 * The outbox's delivery worker. Each of `concurrency` slots claims one endpoint at a time in a
 * transaction (FOR UPDATE SKIP LOCKED), sends its due deliveries in event order until one fails, and
 * records each outcome in that transaction; so any number of workers on any number of instances
 * never send to one endpoint at once, and an endpoint's events arrive in order. A worker that dies
 * mid-send rolls back: those deliveries are sent again, with the same webhook-id (at least once).
 */
export function startWebhookWorker(options: WebhookWorkerOptions): WebhookWorker {
  const { db, policy, timeoutMs, log } = options
  const random = options.random ?? Math.random
  const clock = options.clock ?? Date.now
  const pollMs = options.pollMs ?? 1000
  const metrics = deliveryMetrics(options.registry)
  let stopped = false
  let running: Promise<number> | undefined
  let lastBacklog = 0

  async function deliver(trx: Transaction<Database>, endpoint: ClaimedEndpoint): Promise<number> {
    let attempted = 0
    while (attempted < DELIVERIES_PER_CLAIM) {
      const delivery = await nextPendingDelivery(trx, endpoint.id)
      if (!delivery?.due) break
      attempted++
      const id = messageId(delivery.eventId)
      const payload = webhookPayload(delivery)
      const headers = signedHeaders(endpoint.secrets, id, new Date(clock()), payload)
      // The receiver's trace continues the request that made the event.
      if (delivery.traceparent !== null) headers.traceparent = delivery.traceparent
      const outcome: SendOutcome = await sendWebhook(endpoint.url, headers, payload, { policy, timeoutMs })
      if (outcome.ok) {
        await recordDelivered(trx, endpoint.id, delivery.eventId, outcome)
        metrics.count('delivered')
        continue
      }
      const retrySeconds = retryDelaySeconds(delivery.attempts + 1, random)
      const result = await recordFailedAttempt(trx, endpoint.id, delivery.eventId, outcome, retrySeconds)
      metrics.count(outcome.refused ? 'refused' : result.failed ? 'failed' : 'retried')
      log.warn(
        { endpointId: endpoint.id, eventId: delivery.eventId, status: outcome.status, failed: result.failed },
        outcome.refused ? 'webhook refused by the address policy' : 'webhook delivery failed'
      )
      if (result.paused) {
        await appendWebhookEvent(trx, {
          type: 'endpoint.paused',
          accountId: null,
          data: {
            endpoint: { id: String(endpoint.id), url: endpoint.url },
            failingSince: result.paused.failingSince.toISOString(),
            lastStatus: outcome.status,
            lastResponse: outcome.response
          }
        })
        log.warn({ endpointId: endpoint.id }, 'webhook endpoint paused after an hour of failures')
      }
      // Later events wait for this one: an endpoint's events arrive in the order they were written.
      if (!result.failed || result.paused) break
    }
    return attempted
  }

  /** One slot: claims endpoints one after another until none is due. */
  async function slot(): Promise<number> {
    let attempted = 0
    for (;;) {
      if (stopped) break
      const sent = await db.transaction().execute(async (trx) => {
        const endpoint = await claimWebhookEndpoint(trx)
        return endpoint ? deliver(trx, endpoint) : undefined
      })
      if (sent === undefined) break
      attempted += sent
    }
    return attempted
  }

  async function drain(): Promise<number> {
    const counts = await Promise.all(Array.from({ length: options.concurrency }, slot))
    if (options.registry && clock() - lastBacklog >= BACKLOG_EVERY_MS) {
      lastBacklog = clock()
      metrics.backlog(await readWebhookBacklog(db))
    }
    return counts.reduce((sum, count) => sum + count, 0)
  }

  let timer: NodeJS.Timeout | undefined
  /** Told of a delivery while a round ran: another round follows at once. */
  let told = false
  const listener = options.listenUrl === undefined ? undefined : dueListener(options.listenUrl, log, () => wake())

  /** How long to wait after a round that attempted `attempted` deliveries. */
  async function pause(attempted: number): Promise<number> {
    if (attempted > 0 || told || !listener?.listening()) return told ? 0 : pollMs
    const untilDue = await millisecondsUntilNextDelivery(db)
    return untilDue === null ? IDLE_POLL_MS : Math.min(IDLE_POLL_MS, Math.max(0, untilDue))
  }

  const tick = () => {
    told = false
    running = drain()
      .then(async (attempted) => {
        schedule(await pause(attempted))
        return attempted
      })
      .catch((error: unknown) => {
        log.warn({ err: error }, 'webhook delivery round failed')
        schedule(pollMs)
        return 0
      })
      .finally(() => {
        running = undefined
      })
  }
  function schedule(ms: number) {
    if (stopped) return
    clearTimeout(timer)
    timer = setTimeout(tick, ms)
  }
  function wake() {
    if (stopped) return
    if (running) told = true
    else schedule(0)
  }
  timer = setTimeout(tick, 0)

  return {
    drain,
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
      clearTimeout(timer)
      await listener?.stop()
    }
  }
}

/** A session listening for deliveries announced as due; opened again a second after it is lost. */
function dueListener(url: string, log: Pick<Logger, 'warn'>, onDue: () => void) {
  let client: pg.Client | undefined
  let listening = false
  let stopped = false
  let retry: NodeJS.Timeout | undefined
  const open = async () => {
    const opened = new pg.Client({ connectionString: url, application_name: 'animal-store-webhooks-listener' })
    client = opened
    const lost = (reason: unknown) => {
      if (client !== opened) return
      listening = false
      client = undefined
      void opened.end().catch(() => {})
      if (stopped) return
      log.warn({ err: reason }, 'lost the webhook delivery channel; polling until it is back')
      retry = setTimeout(() => {
        void open()
      }, RELISTEN_DELAY_MS)
      retry.unref()
    }
    opened.on('error', lost)
    opened.on('end', () => lost(new Error('the connection ended')))
    opened.on('notification', () => onDue())
    try {
      await opened.connect()
      await opened.query(`LISTEN ${DUE_CHANNEL}`)
      listening = !stopped
      // What was added while nobody listened is looked for now.
      onDue()
    } catch (error) {
      lost(error)
    }
  }
  void open()
  return {
    listening: () => listening,
    async stop() {
      stopped = true
      listening = false
      clearTimeout(retry)
      const open = client
      client = undefined
      await open?.end().catch(() => {})
    }
  }
}

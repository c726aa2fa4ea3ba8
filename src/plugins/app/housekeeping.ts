import fp from 'fastify-plugin'
import { deleteAuditEventsOlderThan } from '../../repositories/audit-events.js'
import { deleteEndedKeyBans, deleteIdleCounters } from '../../repositories/rate-limits.js'
import { deleteUsageBefore } from '../../repositories/usage.js'
import { deleteFinishedWebhookDeliveries } from '../../repositories/webhook-deliveries.js'
import { appendKeyExpiringEvents, appendUsageReportedEvents } from '../../repositories/webhook-events.js'

const INTERVAL_MS = 10 * 60_000
const DAY_MS = 86_400_000
/**
 * An hour's usage.reported events wait this long after it ends: instances report the usage they
 * counted every 5 seconds (limiter.ts), so every instance that is up has reported the hour by then.
 */
const USAGE_REPORT_GRACE_SECONDS = 60

export interface Housekeeping {
  /**
   * Deletes rate-limit counters that hold nothing, ended bans, and usage, audit events and finished
   * webhook deliveries past their retention; writes the `key.expiring` and `usage.reported` events due.
   */
  run(): Promise<{
    counters: number
    usageHours: number
    auditEvents: number
    webhookDeliveries: number
    expiringKeys: number
    usageReports: number
  }>
}

declare module 'fastify' {
  interface FastifyInstance {
    housekeeping: Housekeeping
  }
}

/**
 * Clean-ups every instance runs every ten minutes; two instances doing one at once is harmless, and
 * each key's `key.expiring` event (KEY_EXPIRING_DAYS before it expires) and each closed hour's
 * `usage.reported` events (one an account, up to ten minutes after the hour) are written once whoever runs it.
 * Usage is kept USAGE_RETENTION_DAYS UTC days, today included; audit events AUDIT_RETENTION_DAYS days
 * by the database's clock; finished webhook deliveries WEBHOOKS_RETENTION_DAYS days, and then the
 * events no delivery needs.
 */
export default fp(
  async (app) => {
    const { db, databaseClock, config } = app
    async function run() {
      const now = databaseClock.now()
      const today = now - (now % DAY_MS)
      const firstKept = new Date(today - (config.USAGE_RETENTION_DAYS - 1) * DAY_MS).toISOString().slice(0, 10)
      // First, so that a clean-up that fails leaves no key unwarned.
      const expiringKeys = await appendKeyExpiringEvents(db, config.KEY_EXPIRING_DAYS)
      const usageReports = await appendUsageReportedEvents(db, USAGE_REPORT_GRACE_SECONDS)
      const counters = await deleteIdleCounters(db)
      await deleteEndedKeyBans(db)
      const usageHours = await deleteUsageBefore(db, firstKept)
      const auditEvents = await deleteAuditEventsOlderThan(db, config.AUDIT_RETENTION_DAYS)
      const webhookDeliveries = await deleteFinishedWebhookDeliveries(db, config.WEBHOOKS_RETENTION_DAYS)
      return { counters, usageHours, auditEvents, webhookDeliveries, expiringKeys, usageReports }
    }
    app.decorate('housekeeping', { run } satisfies Housekeeping)
    const timer = setInterval(() => {
      run().catch((error: unknown) => app.log.warn({ err: error }, 'clean-up failed'))
    }, INTERVAL_MS)
    timer.unref()
    app.addHook('onClose', async () => clearInterval(timer))
  },
  { name: 'housekeeping' }
)

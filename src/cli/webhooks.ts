import { webhookAddressPolicy } from '../config.js'
import type { WebhookDeliveryStatus } from '../db/schema.js'
import type { WebhookDeliveryRecord } from '../repositories/webhook-deliveries.js'
import type { WebhookEndpointRecord } from '../repositories/webhook-endpoints.js'
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
  rotateEndpointSecret,
  WEBHOOK_EVENT_TYPES
} from '../services/webhooks.js'
import {
  cliActor,
  dispatch,
  idArgument,
  noPositionals,
  printable,
  printTable,
  subcommand,
  toJson,
  UsageError,
  type Subcommand,
  type WithDatabase
} from './common.js'

const USAGE = {
  webhooks: `Usage: npm run --silent cli -- webhooks <create|list|show|update|delete|rotate-secret|deliveries|retry> [options]

  create --url URL --events TYPE,... [--description TEXT] [--json]
  list [--json]
  show ID [--json]
  update ID [--url URL] [--events TYPE,...] [--description TEXT] [--pause | --resume] [--json]
  delete ID
  rotate-secret ID [--grace-seconds N] [--json]
  deliveries ID [--status pending|delivered|failed] [--limit N] [--json]
  retry ID EVENT_ID

Endpoints that the service's events are sent to, signed per Standard Webhooks (docs/webhooks.md).
Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
  create: `Usage: npm run --silent cli -- webhooks create --url URL --events TYPE,... [--description TEXT] [--json]

Registers an endpoint and prints its signing secret (whsec_...) once; store it now.
  --url URL          https to a public address (http and loopback too with WEBHOOKS_ALLOW_HTTP=true)
  --events TYPE,...  the event types it takes: ${WEBHOOK_EVENT_TYPES.join(', ')}
  --description T    a label for the endpoint
  --json             print one JSON object: the endpoint and its secret`,
  list: `Usage: npm run --silent cli -- webhooks list [--json]

Lists every endpoint with its events and state. Secrets are never shown.`,
  show: `Usage: npm run --silent cli -- webhooks show ID [--json]`,
  update: `Usage: npm run --silent cli -- webhooks update ID [--url URL] [--events TYPE,...] [--description TEXT] [--pause | --resume] [--json]

Changes what is given. --pause stops deliveries to the endpoint; --resume sends what waited, in order.`,
  delete: `Usage: npm run --silent cli -- webhooks delete ID

Deletes the endpoint with its deliveries, sent or not.`,
  'rotate-secret': `Usage: npm run --silent cli -- webhooks rotate-secret ID [--grace-seconds N] [--json]

Gives the endpoint a new secret, printed once. The previous one keeps signing beside it for the grace:
a day unless given, at most 604800 (a week); 0 ends it at once.`,
  deliveries: `Usage: npm run --silent cli -- webhooks deliveries ID [--status pending|delivered|failed] [--limit N] [--json]

The endpoint's deliveries, newest first (the last 50 unless --limit, at most 1000): status, attempts,
the next attempt of a pending one, and the last answer (its HTTP status and the start of its body,
or why none came).`,
  retry: `Usage: npm run --silent cli -- webhooks retry ID EVENT_ID

Sends a failed delivery again, with 24 hours afresh.`
}

const STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed']

const eventsOption = (value: string | undefined) =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((type) => type.trim())
        .filter((type) => type !== '')

function graceOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^[0-9]{1,7}$/.test(value)) {
    throw new UsageError(`--grace-seconds must be a whole number of seconds, not '${printable(value)}'`)
  }
  return Number(value)
}

function limitOption(value: string | undefined): number {
  if (value === undefined) return 50
  if (!/^[1-9][0-9]{0,3}$/.test(value) || Number(value) > 1000) {
    throw new UsageError(`--limit must be a whole number from 1 to 1000, not '${printable(value)}'`)
  }
  return Number(value)
}

function statusOption(value: string | undefined): WebhookDeliveryStatus | undefined {
  if (value === undefined) return undefined
  if (!(STATUSES as readonly string[]).includes(value)) {
    throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, not '${printable(value)}'`)
  }
  return value as WebhookDeliveryStatus
}

const state = (endpoint: WebhookEndpointRecord) =>
  endpoint.pausedAt
    ? 'paused'
    : endpoint.failingSince
      ? `failing since ${endpoint.failingSince.toISOString()}`
      : 'active'

function printEndpoints(endpoints: WebhookEndpointRecord[]) {
  printTable([
    ['ID', 'URL', 'EVENTS', 'STATE', 'DESCRIPTION'],
    ...endpoints.map((endpoint) => [
      String(endpoint.id),
      endpoint.url,
      endpoint.events.join(','),
      state(endpoint),
      endpoint.description ?? ''
    ])
  ])
}

/** A delivery's last answer on one line: its status and the start of what came back. */
function lastAnswer(delivery: WebhookDeliveryRecord): string {
  if (delivery.attempts === 0) return '-'
  const text = (delivery.lastResponse ?? '').replace(/\s+/g, ' ').trim()
  const shown = text.length > 60 ? `${text.slice(0, 59)}…` : text
  return [delivery.lastStatus ?? 'no answer', shown].filter((part) => part !== '').join(' ')
}

function printSecret(endpoint: WebhookEndpointRecord, secret: string, json: boolean, verb: string) {
  if (json) {
    console.log(toJson({ ...describeEndpoint(endpoint), secret }))
    return
  }
  const grace = endpoint.previousSecretUntil
    ? `; the previous secret signs too until ${endpoint.previousSecretUntil.toISOString()}`
    : ''
  console.log(`${verb} webhook endpoint ${endpoint.id} (${endpoint.url}; ${endpoint.events.join(', ')})${grace}`)
  console.log('Signing secret, shown only this once; store it now:')
  console.log(secret)
}

const subcommands: Record<string, Subcommand> = {
  create: subcommand(
    USAGE.create,
    { url: { type: 'string' }, events: { type: 'string' }, description: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      if (values.url === undefined) throw new UsageError('--url is required: where the events are sent')
      const events = eventsOption(values.events)
      if (events === undefined) throw new UsageError(`--events is required: ${WEBHOOK_EVENT_TYPES.join(', ')}`)
      const fields = { url: values.url, events, description: values.description }
      const { endpoint, secret } = await withDatabase((db, config) =>
        createEndpoint(db, cliActor(), fields, webhookAddressPolicy(config))
      )
      printSecret(endpoint, secret, values.json === true, 'Created')
    }
  ),

  list: subcommand(USAGE.list, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    noPositionals(positionals)
    const { endpoints } = await withDatabase((db) => listEndpoints(db))
    if (values.json) console.log(toJson(endpoints.map(describeEndpoint)))
    else printEndpoints(endpoints)
  }),

  show: subcommand(USAGE.show, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    const id = idArgument(positionals, USAGE.show, 'endpoint')
    const endpoint = await withDatabase((db) => getEndpoint(db, id))
    if (values.json) console.log(toJson(describeEndpoint(endpoint)))
    else printEndpoints([endpoint])
  }),

  update: subcommand(
    USAGE.update,
    {
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      pause: { type: 'boolean' },
      resume: { type: 'boolean' },
      json: { type: 'boolean' }
    },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE.update, 'endpoint')
      if (values.pause && values.resume) throw new UsageError('--pause and --resume exclude each other')
      const changes = {
        url: values.url,
        events: eventsOption(values.events),
        description: values.description,
        paused: values.pause ? true : values.resume ? false : undefined
      }
      if (Object.values(changes).every((value) => value === undefined)) {
        throw new UsageError('give what to change: --url, --events, --description, --pause or --resume')
      }
      const endpoint = await withDatabase((db, config) =>
        changeEndpoint(db, cliActor(), id, changes, webhookAddressPolicy(config))
      )
      if (values.json) console.log(toJson(describeEndpoint(endpoint)))
      else printEndpoints([endpoint])
    }
  ),

  delete: subcommand(USAGE.delete, {}, async (_values, positionals, withDatabase) => {
    const id = idArgument(positionals, USAGE.delete, 'endpoint')
    await withDatabase((db) => deleteEndpoint(db, cliActor(), id))
    console.log(`Deleted webhook endpoint ${id} and its deliveries`)
  }),

  'rotate-secret': subcommand(
    USAGE['rotate-secret'],
    { 'grace-seconds': { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE['rotate-secret'], 'endpoint')
      const grace = graceOption(values['grace-seconds'])
      const { endpoint, secret } = await withDatabase((db) => rotateEndpointSecret(db, cliActor(), id, grace))
      printSecret(endpoint, secret, values.json === true, 'Rotated the secret of')
    }
  ),

  deliveries: subcommand(
    USAGE.deliveries,
    { status: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const id = idArgument(positionals, USAGE.deliveries, 'endpoint')
      const page = { status: statusOption(values.status), limit: limitOption(values.limit) }
      const { deliveries } = await withDatabase((db) => listDeliveries(db, id, page))
      if (values.json) {
        console.log(toJson(deliveries.map(describeDelivery)))
        return
      }
      printTable([
        ['EVENT', 'TYPE', 'STATUS', 'ATTEMPTS', 'NEXT_ATTEMPT', 'LAST_ATTEMPT', 'LAST_ANSWER'],
        ...deliveries.map((delivery) => [
          String(delivery.eventId),
          delivery.type,
          delivery.status === 'failed' ? 'FAILED' : delivery.status,
          String(delivery.attempts),
          delivery.nextAttemptAt?.toISOString() ?? '-',
          delivery.lastAttemptAt?.toISOString() ?? '-',
          lastAnswer(delivery)
        ])
      ])
    }
  ),

  retry: subcommand(USAGE.retry, {}, async (_values, positionals, withDatabase) => {
    if (positionals.length !== 2) {
      throw new UsageError(`expected an endpoint ID and an event ID; ${USAGE.retry.split('\n')[0]}`)
    }
    const id = idArgument(positionals.slice(0, 1), USAGE.retry, 'endpoint')
    const eventId = idArgument(positionals.slice(1), USAGE.retry, 'event')
    await withDatabase((db) => retryDelivery(db, id, eventId))
    console.log(`Delivery of event ${eventId} to endpoint ${id} is pending again`)
  })
}

export const webhooks = (args: string[], withDatabase: WithDatabase) =>
  dispatch('webhooks', USAGE.webhooks, subcommands, args, withDatabase)

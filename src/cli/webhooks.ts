import { Option, type Command } from '@commander-js/extra-typings'
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
  choiceOption,
  cliActor,
  graceOption,
  idArgument,
  jsonOption,
  numberOption,
  table,
  toJson,
  UsageError,
  type Cli
} from './common.js'

const STATUSES: readonly WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed']

const eventsOption = () =>
  new Option('--events <types>', `comma-separated event types it takes: ${WEBHOOK_EVENT_TYPES.join(', ')}`).argParser(
    (value: string) =>
      value
        .split(',')
        .map((type) => type.trim())
        .filter((type) => type !== '')
  )

const state = (endpoint: WebhookEndpointRecord) =>
  endpoint.pausedAt
    ? 'paused'
    : endpoint.failingSince
      ? `failing since ${endpoint.failingSince.toISOString()}`
      : 'active'

const endpointsTable = (endpoints: WebhookEndpointRecord[]) =>
  table([
    ['ID', 'URL', 'EVENTS', 'STATE', 'DESCRIPTION'],
    ...endpoints.map((endpoint) => [
      String(endpoint.id),
      endpoint.url,
      endpoint.events.join(','),
      state(endpoint),
      endpoint.description ?? ''
    ])
  ])

/** A delivery's last answer on one line: its status and the start of what came back. */
function lastAnswer(delivery: WebhookDeliveryRecord): string {
  if (delivery.attempts === 0) return '-'
  const text = (delivery.lastResponse ?? '').replace(/\s+/g, ' ').trim()
  const shown = text.length > 60 ? `${text.slice(0, 59)}…` : text
  return [delivery.lastStatus ?? 'no answer', shown].filter((part) => part !== '').join(' ')
}

/** `webhooks`: the endpoints that the service's events are sent to, signed per Standard Webhooks. */
export function webhooksCommand(program: Command, cli: Cli) {
  const webhooks = program
    .command('webhooks')
    .description('Register, change, pause, rotate and delete webhook endpoints; list their deliveries')
    .addHelpText(
      'after',
      "\nEndpoints that the service's events are sent to, signed per Standard Webhooks (docs/webhooks.md).\n" +
        `Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`
    )

  function printSecret(endpoint: WebhookEndpointRecord, secret: string, json: boolean | undefined, verb: string) {
    if (json) return cli.print(toJson({ ...describeEndpoint(endpoint), secret }))
    const grace = endpoint.previousSecretUntil
      ? `; the previous secret signs too until ${endpoint.previousSecretUntil.toISOString()}`
      : ''
    cli.print(`${verb} webhook endpoint ${endpoint.id} (${endpoint.url}; ${endpoint.events.join(', ')})${grace}`)
    cli.print('Signing secret, shown only this once; store it now:')
    cli.print(secret)
  }

  const printEndpoint = (endpoint: WebhookEndpointRecord, json: boolean | undefined) =>
    cli.print(json ? toJson(describeEndpoint(endpoint)) : endpointsTable([endpoint]))

  webhooks
    .command('create')
    .description('Register an endpoint and print its signing secret (whsec_...) once; store it now')
    .requiredOption('--url <url>', 'https to a public address (http and loopback too with WEBHOOKS_ALLOW_HTTP=true)')
    .addOption(eventsOption().makeOptionMandatory())
    .option('--description <text>', 'a label for the endpoint')
    .addOption(jsonOption('print one JSON object: the endpoint and its secret'))
    .action(async (options) => {
      const fields = { url: options.url, events: options.events, description: options.description }
      const { endpoint, secret } = await cli.withDatabase((db, config) =>
        createEndpoint(db, cliActor(), fields, webhookAddressPolicy(config))
      )
      printSecret(endpoint, secret, options.json, 'Created')
    })

  webhooks
    .command('list')
    .description('List every endpoint with its events and state; secrets are never shown')
    .addOption(jsonOption('print one JSON array'))
    .action(async (options) => {
      const { endpoints } = await cli.withDatabase((db) => listEndpoints(db))
      cli.print(options.json ? toJson(endpoints.map(describeEndpoint)) : endpointsTable(endpoints))
    })

  webhooks
    .command('show')
    .description('One endpoint')
    .addArgument(idArgument('<id>', 'endpoint'))
    .addOption(jsonOption())
    .action(async (id, options) => {
      printEndpoint(await cli.withDatabase((db) => getEndpoint(db, id)), options.json)
    })

  webhooks
    .command('update')
    .description('Change what is given')
    .addArgument(idArgument('<id>', 'endpoint'))
    .option('--url <url>', 'where the events are sent')
    .addOption(eventsOption())
    .option('--description <text>', 'a label for the endpoint')
    .option('--pause', 'stop deliveries to the endpoint')
    .option('--resume', 'send what waited, in order')
    .addOption(jsonOption())
    .action(async (id, options) => {
      if (options.pause && options.resume) throw new UsageError('--pause and --resume exclude each other')
      const changes = {
        url: options.url,
        events: options.events,
        description: options.description,
        paused: options.pause ? true : options.resume ? false : undefined
      }
      if (Object.values(changes).every((value) => value === undefined)) {
        throw new UsageError('give what to change: --url, --events, --description, --pause or --resume')
      }
      const endpoint = await cli.withDatabase((db, config) =>
        changeEndpoint(db, cliActor(), id, changes, webhookAddressPolicy(config))
      )
      printEndpoint(endpoint, options.json)
    })

  webhooks
    .command('delete')
    .description('Delete the endpoint with its deliveries, sent or not')
    .addArgument(idArgument('<id>', 'endpoint'))
    .action(async (id) => {
      await cli.withDatabase((db) => deleteEndpoint(db, cliActor(), id))
      cli.print(`Deleted webhook endpoint ${id} and its deliveries`)
    })

  webhooks
    .command('rotate-secret')
    .description('Give the endpoint a new secret, printed once; the previous one keeps signing beside it for the grace')
    .addArgument(idArgument('<id>', 'endpoint'))
    .addOption(graceOption('a day unless given, at most 604800 (a week); 0 ends it at once'))
    .addOption(jsonOption())
    .action(async (id, options) => {
      const { endpoint, secret } = await cli.withDatabase((db) =>
        rotateEndpointSecret(db, cliActor(), id, options.graceSeconds)
      )
      printSecret(endpoint, secret, options.json, 'Rotated the secret of')
    })

  webhooks
    .command('deliveries')
    .description(
      "The endpoint's deliveries, newest first: status, attempts, the next attempt of a pending one, and the " +
        'last answer (its HTTP status and the start of its body, or why none came)'
    )
    .addArgument(idArgument('<id>', 'endpoint'))
    .addOption(choiceOption('--status <status>', 'only deliveries in this state', STATUSES))
    .addOption(numberOption('--limit <n>', 'at most N deliveries', 1, 1000).default(50))
    .addOption(jsonOption('print one JSON array'))
    .action(async (id, options) => {
      const page = { status: options.status, limit: options.limit }
      const { deliveries } = await cli.withDatabase((db) => listDeliveries(db, id, page))
      if (options.json) return cli.print(toJson(deliveries.map(describeDelivery)))
      cli.print(
        table([
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
      )
    })

  webhooks
    .command('retry')
    .description('Send a failed delivery again, with 24 hours afresh')
    .addArgument(idArgument('<id>', 'endpoint'))
    .addArgument(idArgument('<event-id>', 'event'))
    .action(async (id, eventId) => {
      await cli.withDatabase((db) => retryDelivery(db, cliActor(), id, eventId))
      cli.print(`Delivery of event ${eventId} to endpoint ${id} is pending again`)
    })
}

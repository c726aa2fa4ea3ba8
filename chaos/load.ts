// The clients of a chaos run: about 1,750 keys in about 480 accounts of 2 to 5 keys on every plan,
// sending a mix of lists, reads of acknowledged pets and creates through nginx, retried as the typed
// client retries; a few accounts driven past their minute limits and a few into their day limits.
import { randomUUID } from 'node:crypto'
import { isLosslessNumber, parse } from 'lossless-json'
import { retryingFetch } from '../client/src/retry.js'
import { connectDatabase } from '../src/db/connect.js'
import type { PlanName } from '../src/db/schema.js'
import { issueApiKey, type IssuedApiKey } from '../src/repositories/api-keys.js'
import { RATE_LIMIT_HEADERS, type Ledger, type LedgerEntry, type LedgerPet } from './ledger.js'
import { sleep } from './topology.js'

/**
 * - background: an occasional request, far inside its limits;
 * - greedy: keeps sending through its 429s, so it is banned, and again each time its ban ends;
 * - polite: sends faster than its limit and waits out each 429's Retry-After, as the typed client does;
 * - daily: sends steadily without retrying, on an account whose day limit the run reaches;
 * - leased: sends fast enough on a minute limit of some hundreds that instances lease it units
 *   ahead (a thirty-second of what is left), reaches the limit each minute and waits out its 429s.
 */
export type KeyRole = 'background' | 'greedy' | 'polite' | 'daily' | 'leased'

/** What the checker needs to know of a key: never its secret. Limits are its account's, shared by its keys. */
export interface KeyInfo {
  prefix: string
  accountId: string
  plan: PlanName
  perMinute: number
  perDay: number
  role: KeyRole
}

interface Client extends KeyInfo {
  secret: string
}

/** Accounts of 2 to 5 keys each, their windows shared by their keys. */
const ACCOUNT_MIX: {
  plan: PlanName
  accounts: number
  role: KeyRole
  keys?: number
  limits?: { perMinute: number; perDay: number }
}[] = [
  { plan: 'free', accounts: 250, role: 'background' },
  { plan: 'pro', accounts: 120, role: 'background' },
  { plan: 'business', accounts: 60, role: 'background' },
  { plan: 'enterprise', accounts: 40, role: 'background', limits: { perMinute: 600, perDay: 50_000 } },
  // Small limits, so that they are reached even when answers are slow; two keys share each account.
  { plan: 'enterprise', accounts: 5, role: 'greedy', keys: 2, limits: { perMinute: 12, perDay: 100_000 } },
  { plan: 'enterprise', accounts: 4, role: 'polite', keys: 3, limits: { perMinute: 30, perDay: 100_000 } },
  // A day limit reached in the run's second minute.
  { plan: 'enterprise', accounts: 3, role: 'daily', keys: 2, limits: { perMinute: 40, perDay: 50 } },
  // Leases of up to 15 units (a thirty-second of 480), spent to the limit in about half a minute.
  { plan: 'enterprise', accounts: 2, role: 'leased', keys: 3, limits: { perMinute: 480, perDay: 1_000_000 } }
]

/** The key the run reads every acknowledged pet back with, after the load: far from its limits. */
const READER = { plan: 'enterprise' as const, limits: { perMinute: 100_000, perDay: 10_000_000 } }

/** A release's issueApiKey (src/repositories/api-keys.ts): this checkout's, or in an upgrade the previous release's. */
export type KeyIssuer = (
  db: Parameters<typeof issueApiKey>[0],
  options: Parameters<typeof issueApiKey>[1]
) => Promise<Pick<IssuedApiKey, 'key' | 'prefix' | 'accountId' | 'perMinute' | 'perDay'>>

/** Issues the run's keys with `issue` in one transaction, directly on the primary; the reader's key last. */
export async function issueKeys(
  directUrl: string,
  next: () => number,
  issue: KeyIssuer = issueApiKey
): Promise<{ clients: Client[]; reader: string }> {
  const handle = connectDatabase({ url: directUrl, poolMax: 1, applicationName: 'animal-store-chaos' })
  try {
    return await handle.db.transaction().execute(async (trx) => {
      const clients: Client[] = []
      for (const { plan, accounts, role, keys, limits } of ACCOUNT_MIX) {
        for (let i = 0; i < accounts; i++) {
          const count = keys ?? 2 + Math.floor(next() * 4)
          let accountId: bigint | undefined
          for (let k = 0; k < count; k++) {
            const issued = await issue(
              trx,
              accountId === undefined ? { plan, limits, name: `chaos ${role}` } : { accountId, name: `chaos ${role}` }
            )
            accountId = issued.accountId
            clients.push({
              secret: issued.key,
              prefix: issued.prefix,
              accountId: String(issued.accountId),
              plan,
              // Every account of the mix has a minute and a day limit of its own.
              perMinute: issued.perMinute!,
              perDay: issued.perDay!,
              role
            })
          }
        }
      }
      const reader = await issue(trx, { ...READER, name: 'chaos reader' })
      return { clients, reader: reader.key }
    })
  } finally {
    await handle.close()
  }
}

export const keyInfo = ({ secret: _secret, ...info }: Client): KeyInfo => info

/** How long a client waits for an answer before it counts a timeout: nginx's own limit is 60 s. */
const ATTEMPT_TIMEOUT_MS = 30_000

class Stopped extends Error {}

export interface LoadOptions {
  url: string
  ledger: Ledger
  clients: Client[]
  /** Requests a second from the background keys together. */
  backgroundRate: number
  instanceAt(upstream: string | null): string | null
  /** The run's seeded generator: which key sends, and what. */
  random: () => number
}

export class Load {
  private stopping = false
  private readonly stopped: Promise<void>
  private stop_!: () => void
  private readonly inFlight = new Set<Promise<unknown>>()
  private readonly petIds: string[] = []

  constructor(private readonly options: LoadOptions) {
    this.stopped = new Promise((done) => (this.stop_ = done))
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.options.random() * items.length)]!
  }

  /** Starts every client; they run until stop(). */
  start() {
    const { clients } = this.options
    this.track(this.background(clients.filter((client) => client.role === 'background')))
    for (const client of clients.filter((c) => c.role === 'greedy')) {
      for (let i = 0; i < 3; i++) this.track(this.greedy(client))
    }
    for (const client of clients.filter((c) => c.role === 'polite')) {
      for (let i = 0; i < 2; i++) this.track(this.polite(client))
    }
    for (const client of clients.filter((c) => c.role === 'daily')) this.track(this.daily(client))
    for (const client of clients.filter((c) => c.role === 'leased')) this.track(this.leased(client))
  }

  /** Stops sending, lets what is in flight finish (at most `drainMs`). */
  async stop(drainMs = 15_000) {
    this.stopping = true
    this.stop_()
    await Promise.race([Promise.allSettled([...this.inFlight]), sleep(drainMs)])
  }

  private track(work: Promise<unknown>) {
    const tracked = work.catch((error: unknown) => {
      if (!(error instanceof Stopped)) throw error
    })
    this.inFlight.add(tracked)
    void tracked.finally(() => this.inFlight.delete(tracked))
  }

  /** Open loop: requests leave at the rate whatever the answers, up to 200 at a time. */
  private async background(clients: Client[]) {
    const started = Date.now()
    let sent = 0
    while (!this.stopping) {
      const due = Math.floor(((Date.now() - started) / 1000) * this.options.backgroundRate)
      for (; sent < due; sent++) {
        if (this.inFlight.size < 200) this.track(this.mixed(this.pick(clients), true))
      }
      await sleep(10)
    }
  }

  private async greedy(client: Client) {
    while (!this.stopping) {
      const entry = await this.mixed(client, false)
      // Banned: one request a second shows whether the ban holds, and when it ends.
      await this.pause(entry?.code === 'key_banned' ? 1000 : 50)
    }
  }

  private async daily(client: Client) {
    while (!this.stopping) {
      await this.mixed(client, false)
      await this.pause(500)
    }
  }

  private async polite(client: Client) {
    while (!this.stopping) {
      await this.mixed(client, true)
      await this.pause(200)
    }
  }

  private async leased(client: Client) {
    while (!this.stopping) {
      await this.mixed(client, true)
      await this.pause(100)
    }
  }

  private async pause(ms: number) {
    await Promise.race([sleep(ms), this.stopped])
  }

  /** A list, a read or a create; with `retry`, retried as the typed client retries. Returns the last attempt. */
  private async mixed(client: Client, retry: boolean): Promise<LedgerEntry | undefined> {
    const roll = this.options.random()
    if (roll < 0.5) return this.send(client, retry, 'GET', `/v1/pets?limit=5`)
    if (roll < 0.65 && this.petIds.length) return this.send(client, retry, 'GET', `/v1/pets/${this.pick(this.petIds)}`)
    const idempotencyKey = randomUUID()
    const body = {
      name: `chaos ${idempotencyKey}`,
      categoryId: 1 + Math.floor(this.options.random() * 5),
      status: this.pick(['available', 'pending', 'sold'])
    }
    return this.send(client, retry, 'POST', '/v1/pets', body, idempotencyKey)
  }

  private async send(
    client: Client,
    retry: boolean,
    method: string,
    path: string,
    body?: unknown,
    idempotencyKey?: string
  ): Promise<LedgerEntry | undefined> {
    let attempt = 0
    let last: LedgerEntry | undefined
    const fetchOnce = async (request: Request): Promise<Response> => {
      if (this.stopping && attempt > 0) throw new Stopped()
      attempt++
      const sentAt = Date.now()
      const base = { sentAt, method, path, key: client.prefix, idempotencyKey: idempotencyKey ?? null, attempt }
      let response: Response
      let text: string
      try {
        response = await fetch(request, { signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS) })
        text = await response.text()
      } catch (error) {
        const timeout = error instanceof DOMException && error.name === 'TimeoutError'
        last = this.options.ledger.record({
          ...base,
          answeredAt: Date.now(),
          instance: null,
          status: 0,
          error: timeout ? 'timeout' : 'network',
          headers: {}
        })
        throw error
      }
      last = this.options.ledger.record({
        ...base,
        answeredAt: Date.now(),
        instance: this.options.instanceAt(response.headers.get('x-upstream')),
        upstreams: (response.headers.get('x-upstream') ?? '').split(/[,:] /).filter(Boolean).length,
        status: response.status,
        headers: Object.fromEntries(
          RATE_LIMIT_HEADERS.flatMap((name) => {
            const value = response.headers.get(name)
            return value === null ? [] : [[name, value]]
          })
        ),
        ...readBody(response.status, text)
      })
      if (last.pet) this.petIds.push(last.pet.id)
      // The body was read for the ledger: the retry logic gets a fresh copy.
      return new Response(text, { status: response.status, headers: response.headers })
    }
    const policy = retry ? {} : { maxAttempts: 1 }
    const fetcher = retryingFetch(fetchOnce, {
      ...policy,
      sleep: async (ms) => {
        await this.pause(ms)
        if (this.stopping) throw new Stopped()
      }
    })
    const headers: Record<string, string> = { authorization: `Bearer ${client.secret}` }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey
    try {
      await fetcher(
        new Request(`${this.options.url}${path}`, {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body)
        })
      )
    } catch (error) {
      // Failures are in the ledger already; a retry cut short by the end of the run is not a request.
      if (!(error instanceof Stopped) && last === undefined) throw error
    }
    return last
  }
}

/** The Error body's code, or a 201's pet, with int64 values as their decimal text. */
function readBody(status: number, text: string): { code?: string; message?: string; pet?: LedgerPet } {
  let body: Record<string, unknown>
  try {
    body = parse(text) as Record<string, unknown>
  } catch {
    return {}
  }
  const decimal = (value: unknown) => (isLosslessNumber(value) ? value.toString() : String(value))
  if (status === 201) {
    return {
      pet: {
        id: decimal(body.id),
        name: String(body.name),
        categoryId: decimal(body.categoryId),
        status: typeof body.status === 'string' ? body.status : null
      }
    }
  }
  if (typeof body.code !== 'string') return {}
  // A 5xx keeps its message too: several causes share service_unavailable.
  return status >= 500 && typeof body.message === 'string'
    ? { code: body.code, message: body.message }
    : { code: body.code }
}

import createFetchClient from 'openapi-fetch'
import { parseJson, stringifyJson } from './json.js'
import { retryAfterMs, retryingFetch, type RetryOptions } from './retry.js'
import type { components, operations, paths } from './schema.js'

export type Pet = components['schemas']['Pet']
export type NewPet = components['schemas']['NewPet']
export type PetStatus = components['schemas']['PetStatus']
export type ErrorBody = components['schemas']['Error']
export type RateLimitStatus = components['schemas']['RateLimitStatus']
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>
export type Scope = components['schemas']['Scope']
export type ApiKey = components['schemas']['ApiKey']
export type IssuedApiKey = components['schemas']['IssuedApiKey']
export type NewApiKey = components['schemas']['NewApiKey']
export type ListKeysQuery = NonNullable<operations['listKeys']['parameters']['query']>
export type UsageRow = components['schemas']['UsageRow']
export type DecisionRequest = components['schemas']['DecisionRequest']
export type Decision = components['schemas']['Decision']
/** GET /v1/usage's query as the client sends it: always JSON. */
export type UsageQuery = Omit<operations['getUsage']['parameters']['query'], 'format'>
export type { RetryOptions } from './retry.js'

/** An answer with an Error body, or one that could not be read as such. */
export class AnimalStoreError extends Error {
  override readonly name = 'AnimalStoreError'
  /** The HTTP status. */
  readonly status: number
  /**
   * The Error body's code, e.g. `not_found`, `rate_limited`, `key_banned`, `insufficient_scope`;
   * `unexpected_response` when there was none.
   */
  readonly code: string
  /** For 403 `insufficient_scope`: the scope the operation needs, from the WWW-Authenticate challenge. */
  readonly requiredScope: string | undefined
  /** Seconds the service asked the client to wait (429 and 503), when it said. */
  readonly retryAfterSeconds: number | undefined

  constructor(response: Response, body: unknown) {
    const error = isErrorBody(body)
      ? body
      : {
          code: 'unexpected_response',
          message: `HTTP ${response.status} without an Error body`,
          status: response.status
        }
    super(error.message)
    this.status = response.status
    this.code = error.code
    this.requiredScope = /\bscope="([^"]*)"/.exec(response.headers.get('www-authenticate') ?? '')?.[1]
    const wait = retryAfterMs(response)
    this.retryAfterSeconds = wait === undefined ? undefined : Math.ceil(wait / 1000)
  }
}

function isErrorBody(body: unknown): body is ErrorBody {
  const candidate = body as Partial<ErrorBody> | null
  return (
    typeof candidate?.code === 'string' && typeof candidate.message === 'string' && typeof candidate.status === 'number'
  )
}

export interface AnimalStoreClientOptions extends RetryOptions {
  /** The base URL, ending in /v1, e.g. https://api.example.com/v1. */
  baseUrl: string
  apiKey: string
  /** Default globalThis.fetch. */
  fetch?: (request: Request) => Promise<Response>
  /** Makes the Idempotency-Key of an addPet call that was given none. Default crypto.randomUUID. */
  createIdempotencyKey?: () => string
}

/** The query of the page a `Link: <…>; rel="next"` header points to, if there is one. */
function nextPageQuery<Query extends { limit?: number }>(link: string | null): Query | undefined {
  for (const part of link?.split(/,(?=\s*<)/) ?? []) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(part)
    const rel = /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(match?.[2] ?? '')?.[1]
    if (!match || !rel?.toLowerCase().split(/\s+/).includes('next')) continue
    const params = Object.fromEntries(new URL(match[1]!).searchParams)
    return { ...params, ...(params.limit === undefined ? {} : { limit: Number(params.limit) }) } as Query
  }
  return undefined
}

/** A page of a listing and the query of the next, while there is one. */
interface Page<Item, Query> {
  items: Item[]
  next: Query | undefined
}

/**
 * Every item of a listing, page after page, following `Link: rel="next"`. The next page is asked of
 * this client's baseUrl with the link's query, so the key goes nowhere else.
 */
async function* everyItem<Item, Query>(first: Query, page: (query: Query) => Promise<Page<Item, Query>>) {
  let next: Query | undefined = first
  while (next) {
    const answered: Page<Item, Query> = await page(next)
    yield* answered.items
    next = answered.next
  }
}

export function createAnimalStoreClient(options: AnimalStoreClientOptions) {
  const createIdempotencyKey = options.createIdempotencyKey ?? (() => globalThis.crypto.randomUUID())
  const api = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers: { authorization: `Bearer ${options.apiKey}` },
    fetch: retryingFetch(options.fetch ?? ((request) => globalThis.fetch(request)), options),
    bodySerializer: stringifyJson
  })

  // Success bodies are read as text and parsed here, so int64 values keep every digit.
  function read<T>(result: { data?: string; error?: unknown; response: Response }): T {
    if (result.error !== undefined || !result.response.ok) throw new AnimalStoreError(result.response, result.error)
    return parseJson<T>(result.data!)
  }

  async function petsPage(query: ListPetsQuery): Promise<Page<Pet, ListPetsQuery>> {
    const result = await api.GET('/pets', { params: { query }, parseAs: 'text' })
    return { items: read<Pet[]>(result), next: nextPageQuery(result.response.headers.get('link')) }
  }

  async function keysPage(query: ListKeysQuery): Promise<Page<ApiKey, ListKeysQuery>> {
    const result = await api.GET('/keys', { params: { query }, parseAs: 'text' })
    return { items: read<ApiKey[]>(result), next: nextPageQuery(result.response.headers.get('link')) }
  }

  async function usagePage(query: UsageQuery): Promise<Page<UsageRow, UsageQuery>> {
    const result = await api.GET('/usage', { params: { query: { ...query, format: 'json' } }, parseAs: 'text' })
    const next = nextPageQuery(result.response.headers.get('link'))
    return { items: read<UsageRow[]>(result), next: next && { ...query, ...next } }
  }

  return {
    /** One page of pets in ascending id order (`limit` 1 to 100, default 20). */
    async listPets(query: ListPetsQuery = {}): Promise<Pet[]> {
      return (await petsPage(query)).items
    },

    /**
     * Every pet matching the filter, page after page, following `Link: rel="next"`. The next page
     * is asked of this client's baseUrl with the link's query, so the key goes nowhere else.
     */
    allPets(query: Omit<ListPetsQuery, 'cursor'> = {}): AsyncGenerator<Pet, void, undefined> {
      return everyItem(query, petsPage)
    },

    /**
     * Adds a pet. The request carries an Idempotency-Key (the one given, or a new one), which is what
     * lets it be retried without creating the pet twice.
     */
    async addPet(pet: NewPet, request: { idempotencyKey?: string } = {}): Promise<Pet> {
      const idempotencyKey = request.idempotencyKey ?? createIdempotencyKey()
      const result = await api.POST('/pets', {
        body: pet,
        params: { header: { 'Idempotency-Key': idempotencyKey } },
        parseAs: 'text'
      })
      return read<Pet>(result)
    },

    /** The key's plan, windows and any ban, without spending a request: it never counts. */
    async rateLimit(): Promise<RateLimitStatus> {
      return read<RateLimitStatus>(await api.GET('/rate_limit', { parseAs: 'text' }))
    },

    /** One page of the keys of this key's account, ids ascending (`limit` 1 to 100, default 20). Needs `keys:manage`. */
    async listKeys(query: ListKeysQuery = {}): Promise<ApiKey[]> {
      return (await keysPage(query)).items
    },

    /** Every key of this key's account, page after page, as allPets follows its pages. Needs `keys:manage`. */
    allKeys(query: Omit<ListKeysQuery, 'cursor'> = {}): AsyncGenerator<ApiKey, void, undefined> {
      return everyItem(query, keysPage)
    },

    /**
     * Issues a key in this key's account, with scopes this key has; its secret is in the answer and
     * nowhere else. Not retried: a replay could not show the secret again, so after a failure look for
     * the key by its name with listKeys. Needs `keys:manage`.
     */
    async createKey(key: NewApiKey): Promise<IssuedApiKey> {
      return read<IssuedApiKey>(await api.POST('/keys', { body: key, parseAs: 'text' }))
    },

    /**
     * Gives a key of this key's account (this one included) a new secret. The old one stops working at
     * once, or keeps working for `graceSeconds` (at most a week). Needs `keys:manage`.
     */
    async rotateKey(id: bigint, rotation: { graceSeconds?: bigint } = {}): Promise<IssuedApiKey> {
      return read<IssuedApiKey>(
        await api.POST('/keys/{id}/rotate', { params: { path: { id } }, body: rotation, parseAs: 'text' })
      )
    },

    /** Revokes a key of this key's account (this one included); revoking it again answers the same. Needs `keys:manage`. */
    async revokeKey(id: bigint): Promise<ApiKey> {
      return read<ApiKey>(await api.DELETE('/keys/{id}', { params: { path: { id } }, parseAs: 'text' }))
    },

    /**
     * One page of this key's account's usage per key and UTC hour (or day) in [from, to), by period
     * then key (`limit` 1 to 1,000, default 100). Needs `usage:read`.
     */
    async listUsage(query: UsageQuery): Promise<UsageRow[]> {
      return (await usagePage(query)).items
    },

    /** Every row of this key's account's usage in [from, to), page after page, as allPets follows its pages. Needs `usage:read`. */
    allUsage(query: Omit<UsageQuery, 'cursor'>): AsyncGenerator<UsageRow, void, undefined> {
      return everyItem(query, usagePage)
    },

    /**
     * For a service whose client was made with an operator token of the role `service` as its apiKey:
     * decides and charges a request that service received with its customer's key. A refusal is an
     * answer (`admitted: false`), not an error. Not retried after a failure, since it may have been charged.
     */
    async decide(request: DecisionRequest): Promise<Decision> {
      return read<Decision>(await api.POST('/decisions', { body: request, parseAs: 'text' }))
    },

    /** @deprecated Removed on the Sunset date (5 December 2030); use allPets or listPets with a status filter. */
    async getPet(petId: bigint): Promise<Pet> {
      return read<Pet>(await api.GET('/pets/{petId}', { params: { path: { petId } }, parseAs: 'text' }))
    }
  }
}

export type AnimalStoreClient = ReturnType<typeof createAnimalStoreClient>

// The admin API as the console calls it: the token from sessionStorage as the bearer header of each
// call, never a cookie, so no other site can make the browser act for the operator. Its types come
// from the admin API's OpenAPI document (schema.ts); int64 values, ids among them, are BigInts.
import { parseJson, stringifyJson } from '../../client/src/json.js'
import { int64Properties, type components, type operations } from './schema.js'

/** Reads an answer of the admin API: what its document declares int64 becomes exact BigInts. */
const readJson = <T>(text: string) => parseJson<T>(text, int64Properties)

const TOKEN_KEY = 'animal-store-admin-token'
const BASE = '/admin/v1'

export const session = {
  token: () => sessionStorage.getItem(TOKEN_KEY),
  signIn: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  signOut: () => sessionStorage.removeItem(TOKEN_KEY)
}

/** An answer other than 2xx, with the Error body's message when there is one. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message)
  }
}

async function send(path: string, init: RequestInit = {}, token = session.token()): Promise<Response> {
  const headers = new Headers(init.headers)
  if (token !== null) headers.set('authorization', `Bearer ${token}`)
  if (init.body !== undefined) headers.set('content-type', 'application/json')
  const response = await fetch(path.startsWith('/') ? path : `${BASE}/${path}`, {
    ...init,
    headers,
    credentials: 'omit'
  })
  if (response.ok) return response
  const body = await response
    .text()
    .then((text) => readJson<{ message?: string }>(text))
    .catch(() => undefined)
  if (response.status === 401) unauthorizedListener?.()
  throw new ApiFailure(response.status, body?.message ?? `${response.status} ${response.statusText}`)
}

let unauthorizedListener: (() => void) | undefined
/** Called when the API refuses the token: the console signs out. */
export function onUnauthorized(listener: () => void) {
  unauthorizedListener = listener
}

export async function get<T>(path: string): Promise<T> {
  return readJson<T>(await (await send(path)).text())
}

export async function post<T>(path: string, body: unknown = undefined, method = 'POST'): Promise<T> {
  const init: RequestInit = { method }
  if (body !== undefined) init.body = stringifyJson(body)
  return readJson<T>(await (await send(path, init)).text())
}

/** A call answered 204, with nothing to read. */
export async function act(path: string, method = 'POST'): Promise<void> {
  await send(path, { method })
}

export const put = <T>(path: string, body: unknown) => post<T>(path, body, 'PUT')
export const patch = <T>(path: string, body: unknown) => post<T>(path, body, 'PATCH')

/** One page of a listing and the path of the next, from its `Link: rel="next"`. */
export interface Page<T> {
  items: T[]
  next: string | undefined
}

export async function getPage<T>(path: string): Promise<Page<T>> {
  const response = await send(path)
  return { items: readJson<T[]>(await response.text()), next: nextPage(response.headers.get('link')) }
}

/** The next page's path and query: the API's Link may name another host than the one the console sees. */
function nextPage(link: string | null): string | undefined {
  const match = link === null ? null : /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)
  if (!match) return undefined
  const url = new URL(match[1]!, location.href)
  return url.pathname + url.search
}

// The smallest authorised call, which every role may make and which says who the token is.
const TOKEN_CHECK = 'whoami'

/** Signs in: the token is kept only when the API accepts it. Answers who it is. */
export async function signIn(token: string): Promise<Whoami> {
  const identity = readJson<Whoami>(await (await send(TOKEN_CHECK, {}, token)).text())
  session.signIn(token)
  return identity
}

/** Who the token this tab keeps is, while the API still accepts it. */
export async function checkToken(): Promise<Whoami> {
  return get<Whoami>(TOKEN_CHECK)
}

type Schemas = components['schemas']
export type Whoami = Schemas['Whoami']
export type Role = Schemas['Role']
export type PlanName = Schemas['PlanName']
export type Plan = Schemas['Plan']
export type PlanDefinition = Schemas['PlanDefinition']
export type Override = Schemas['Override']
export type OverrideInput = Schemas['OverrideInput']
export type Credits = Schemas['Credits']
export type CreditChange = Schemas['CreditChange']
export type Scope = Schemas['Scope']
export type Key = Schemas['Key']
export type IssuedKey = Schemas['IssuedKey']
export type NewKey = Schemas['NewKey']
export type KeyChanges = Schemas['KeyChanges']
export type KeyRotation = Schemas['KeyRotation']
export type Metadata = Schemas['Metadata']
export type Account = Schemas['Account']
export type NewAccount = Schemas['NewAccount']
export type AccountWindows = Schemas['AccountWindows']
/** A window as it stands, in the shape of `GET /v1/rate_limit`'s; `reset` in Unix seconds. */
export type RateLimitWindow = AccountWindows['windows'][number]
export type AuditEvent = Schemas['AuditEvent']
export type UsageDay = Schemas['Usage']['days'][number]
/** A row of GET /usage as JSON: one key's usage in one UTC hour or day. */
export type UsageRow = operations['exportUsage']['responses'][200]['content']['application/json'][number]
export type WebhookEventType = Schemas['WebhookEventType']
export type WebhookEndpoint = Schemas['WebhookEndpoint']
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret']
export type NewWebhookEndpoint = Schemas['NewWebhookEndpoint']
export type WebhookEndpointChanges = Schemas['WebhookEndpointChanges']
export type WebhookDelivery = Schemas['WebhookDelivery']

// Every scope the document names, each once: a name added there fails the typecheck here. Plans are
// data: the console reads them from GET /plans.
const scopeNames: Record<Scope, true> = {
  'pets:read': true,
  'pets:write': true,
  'keys:manage': true,
  'usage:read': true
}
export const SCOPES = Object.keys(scopeNames) as Scope[]
/** The scopes a key gets when its request names none (the admin API's default). */
export const DEFAULT_SCOPES: Scope[] = ['pets:read', 'pets:write']

// Every webhook event type, each once, in the document's order: a type added there fails the typecheck here.
const eventTypeNames: Record<WebhookEventType, true> = {
  'key.created': true,
  'key.rotated': true,
  'key.revoked': true,
  'key.leaked': true,
  'key.expiring': true,
  'account.created': true,
  'plan.changed': true,
  'key.banned': true,
  'usage.threshold': true,
  'limit.would_refuse': true,
  'usage.reported': true,
  'endpoint.paused': true
}
export const WEBHOOK_EVENT_TYPES = Object.keys(eventTypeNames) as WebhookEventType[]

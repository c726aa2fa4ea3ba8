// The admin API as the console calls it: the token from sessionStorage as the bearer header of each
// call, never a cookie, so no other site can make the browser act for the operator.

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
  const body = (await response.json().catch(() => undefined)) as { message?: string } | undefined
  if (response.status === 401) unauthorizedListener?.()
  throw new ApiFailure(response.status, body?.message ?? `${response.status} ${response.statusText}`)
}

let unauthorizedListener: (() => void) | undefined
/** Called when the API refuses the token: the console signs out. */
export function onUnauthorized(listener: () => void) {
  unauthorizedListener = listener
}

export async function get<T>(path: string): Promise<T> {
  return (await send(path)).json() as Promise<T>
}

export async function post<T>(path: string, body: unknown = undefined): Promise<T> {
  const init: RequestInit = { method: 'POST' }
  if (body !== undefined) init.body = JSON.stringify(body)
  return (await send(path, init)).json() as Promise<T>
}

/** One page of a listing and the path of the next, from its `Link: rel="next"`. */
export interface Page<T> {
  items: T[]
  next: string | undefined
}

export async function getPage<T>(path: string): Promise<Page<T>> {
  const response = await send(path)
  return { items: (await response.json()) as T[], next: nextPage(response.headers.get('link')) }
}

/** The next page's path and query: the API's Link may name another host than the one the console sees. */
function nextPage(link: string | null): string | undefined {
  const match = link === null ? null : /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)
  if (!match) return undefined
  const url = new URL(match[1]!, location.href)
  return url.pathname + url.search
}

// The smallest authorised call, its body read so that no navigation cuts it short.
const TOKEN_CHECK = 'keys?limit=1'

/** Signs in: the token is kept only when the API accepts it. */
export async function signIn(token: string): Promise<void> {
  await (await send(TOKEN_CHECK, {}, token)).json()
  session.signIn(token)
}

/** Whether the API still accepts the token this tab keeps. */
export async function checkToken(): Promise<void> {
  await get(TOKEN_CHECK)
}

export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const
export type Plan = (typeof PLANS)[number]
export const SCOPES = ['pets:read', 'pets:write'] as const

export interface Key {
  id: number
  prefix: string
  name: string | null
  plan: Plan
  perMinute: number
  perDay: number
  createdAt: string
  expiresAt: string | null
  revokedAt: string | null
  scopes: string[]
  accountId: number
}

export interface IssuedKey extends Key {
  key: string
}

export interface Account {
  id: number
  externalId: string | null
  name: string | null
  plan: Plan
  perMinute: number
  perDay: number
  createdAt: string
  closedAt: string | null
}

/** A window as it stands, in the shape of `GET /v1/rate_limit`'s; `reset` in Unix seconds. */
export interface RateLimitWindow {
  name: 'minute' | 'day'
  limit: number
  used: number
  remaining: number
  reset: number
}

export interface AccountWindows {
  windows: RateLimitWindow[]
  bans: { keyId: number; prefix: string; bannedUntil: string }[]
}

export interface AuditEvent {
  id: number
  at: string
  actor: string
  action: string
  accountId: number | null
  keyId: number | null
  changes: Record<string, { before: unknown; after: unknown }>
  requestId: string | null
}

export interface UsageDay {
  date: string
  admitted: number
  refused: number
}

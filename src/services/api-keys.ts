import type { Kysely } from 'kysely'
import type { Database, PlanName } from '../db/schema.js'
import { DAY_MS } from '../limits/windows.js'
import {
  ApiKeyError,
  getApiKey,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  updateApiKey,
  type ApiKeyRecord,
  type CustomLimits,
  type IssuedApiKey
} from '../repositories/api-keys.js'
import { readUsage, type DayOfUsage } from '../repositories/usage.js'

// What the CLI and the admin API do with keys: the rules of plans and limits, and "no such key",
// over the repositories. Nothing here knows of HTTP or of the terminal.

type Db = Kysely<Database>

/** No key has this id (or, for a rotation, no key that may still be used). */
export class KeyNotFoundError extends Error {}

export interface KeyFields {
  plan: PlanName
  name?: string | null
  perMinute?: number
  perDay?: number
  expiresAt?: Date | null
}

/** An enterprise key carries its own limits, both of them; the other plans' keys carry none. */
function limitsFor(plan: PlanName, perMinute: number | undefined, perDay: number | undefined): CustomLimits | null {
  if (plan !== 'enterprise') {
    if (perMinute !== undefined || perDay !== undefined) {
      throw new ApiKeyError(`The ${plan} plan has fixed limits; per-minute and per-day limits are for enterprise keys`)
    }
    return null
  }
  if (perMinute === undefined || perDay === undefined) {
    throw new ApiKeyError('An enterprise key needs its own per-minute and per-day limits, both of them')
  }
  return { perMinute, perDay }
}

/** A key as operators see it, in the CLI's --json and the admin API: its fields, never its secret's hash. */
export function describeKey(record: ApiKeyRecord) {
  return {
    id: record.id,
    prefix: record.prefix,
    name: record.name,
    plan: record.plan,
    perMinute: record.perMinute,
    perDay: record.perDay,
    createdAt: record.createdAt.toISOString(),
    expiresAt: record.expiresAt?.toISOString() ?? null,
    revokedAt: record.revokedAt?.toISOString() ?? null
  }
}

export async function createKey(db: Db, fields: KeyFields): Promise<IssuedApiKey> {
  const limits = limitsFor(fields.plan, fields.perMinute, fields.perDay) ?? undefined
  return issueApiKey(db, {
    plan: fields.plan,
    limits,
    name: fields.name ?? undefined,
    expiresAt: fields.expiresAt ?? undefined
  })
}

/** Keys in ascending id order, every one or `limit` at a time, and whether more follow. */
export async function listKeys(db: Db, page: { limit?: number; afterId?: bigint } = {}) {
  const { limit, afterId } = page
  const keys = await listApiKeys(db, { afterId, limit: limit === undefined ? undefined : limit + 1 })
  const hasMore = limit !== undefined && keys.length > limit
  if (hasMore) keys.pop()
  return { keys, hasMore }
}

export async function getKey(db: Db, id: bigint): Promise<ApiKeyRecord> {
  return (await getApiKey(db, id)) ?? notFound(id)
}

/**
 * Changes the fields given and keeps the others. Moving to enterprise needs both limits (unless the
 * key is enterprise already); moving away drops them; limits alone are for enterprise keys.
 */
export async function changeKey(db: Db, id: bigint, changes: Partial<KeyFields>): Promise<ApiKeyRecord> {
  const current = await getKey(db, id)
  const plan = changes.plan ?? current.plan
  const touchesLimits = changes.plan !== undefined || changes.perMinute !== undefined || changes.perDay !== undefined
  const stays = plan === 'enterprise' && current.plan === 'enterprise'
  const limits = touchesLimits
    ? limitsFor(
        plan,
        changes.perMinute ?? (stays ? current.perMinute : undefined),
        changes.perDay ?? (stays ? current.perDay : undefined)
      )
    : undefined
  const updated = await updateApiKey(db, id, {
    plan: changes.plan,
    limits,
    name: changes.name,
    expiresAt: changes.expiresAt
  })
  return updated ?? notFound(id)
}

export async function revokeKey(db: Db, id: bigint): Promise<ApiKeyRecord> {
  return (await revokeApiKey(db, id)) ?? notFound(id)
}

/** A new secret, shown once; the old one stops working. A revoked key cannot be rotated. */
export async function rotateKey(db: Db, id: bigint): Promise<IssuedApiKey> {
  const rotated = await rotateApiKey(db, id)
  if (!rotated) throw new KeyNotFoundError(`No active key with id ${id}`)
  return rotated
}

/** The key's usage on each of the last `days` UTC days, today first; days without requests count 0. */
export async function keyUsage(db: Db, id: bigint, days: number, now: number): Promise<DayOfUsage[]> {
  await getKey(db, id)
  const today = now - (now % DAY_MS)
  const dateOf = (ago: number) => new Date(today - ago * DAY_MS).toISOString().slice(0, 10)
  const stored = new Map((await readUsage(db, id, dateOf(days - 1))).map((day) => [day.date, day]))
  return Array.from(
    { length: days },
    (_, ago) => stored.get(dateOf(ago)) ?? { date: dateOf(ago), admitted: 0, refused: 0 }
  )
}

function notFound(id: bigint): never {
  throw new KeyNotFoundError(`No key with id ${id}`)
}

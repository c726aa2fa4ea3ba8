import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, LimitAlgorithm, LimitWindow } from '../db/schema.js'

type Db = Kysely<Database> | Transaction<Database>

/** The windows from the shortest to the longest: the order every listing of limits follows. */
export const WINDOWS: readonly LimitWindow[] = ['second', 'minute', 'hour', 'day', 'month']

/** Where a month starts: the UTC calendar's first, or the account's cycleAnchor (a plan's fixed month only). */
export type LimitAnchor = 'calendar' | 'account'

/** One limit of an account's overrides (whose month is always the calendar's). */
export interface Limit {
  window: LimitWindow
  algorithm: LimitAlgorithm
  limit: number
  /** A bucket's capacity; null: its limit (and always null for a fixed window). */
  burst: number | null
}

/** One limit of a plan: enforced, or a shadow, counted and never refusing; its month the calendar's or the account's. */
export interface PlanLimit extends Limit {
  shadow: boolean
  anchor: LimitAnchor
}

/** A plan as stored: its limits in window order, an enforced limit before a shadow one, and its costs by route. */
export interface PlanRecord {
  name: string
  limits: PlanLimit[]
  costs: Record<string, number>
  createdAt: Date
  updatedAt: Date
}

/** Window order, an enforced limit before a shadow limit of its window. */
export const byWindow = (a: { window: LimitWindow; shadow: boolean }, b: { window: LimitWindow; shadow: boolean }) =>
  WINDOWS.indexOf(a.window) - WINDOWS.indexOf(b.window) || Number(a.shadow) - Number(b.shadow)

/** The plans named (every plan without `names`), each with its limits and costs, in name order. 3 queries at once. */
async function readPlans(db: Db, names?: string[]): Promise<PlanRecord[]> {
  if (names?.length === 0) return []
  let plans = db.selectFrom('plans').select(['name', 'created_at', 'updated_at']).orderBy('name')
  let limits = db
    .selectFrom('plan_limits')
    .select(['plan', 'window', 'algorithm', 'limit', 'burst', 'shadow', 'anchor'])
  let costs = db.selectFrom('plan_costs').select(['plan', 'route', 'cost']).orderBy('route')
  if (names !== undefined) {
    plans = plans.where('name', 'in', names)
    limits = limits.where('plan', 'in', names)
    costs = costs.where('plan', 'in', names)
  }
  const [planRows, limitRows, costRows] = await Promise.all([plans.execute(), limits.execute(), costs.execute()])
  return planRows.map((plan) => ({
    name: plan.name,
    limits: limitRows
      .filter((row) => row.plan === plan.name)
      .map(({ window, algorithm, limit, burst, shadow, anchor }) => ({
        window,
        algorithm,
        limit,
        burst,
        shadow,
        anchor
      }))
      .sort(byWindow),
    costs: Object.fromEntries(costRows.filter((row) => row.plan === plan.name).map((row) => [row.route, row.cost])),
    createdAt: plan.created_at,
    updatedAt: plan.updated_at
  }))
}

export const listPlans = (db: Db) => readPlans(db)

export async function getPlan(db: Db, name: string): Promise<PlanRecord | undefined> {
  return (await readPlans(db, [name]))[0]
}

/** Every plan's name, in name order. */
export async function listPlanNames(db: Db): Promise<string[]> {
  return (await db.selectFrom('plans').select('name').orderBy('name').execute()).map((row) => row.name)
}

/** Whether this session's role may delete plans: the schema's owner may, the service's role may not. */
export async function mayDeletePlans(db: Db): Promise<boolean> {
  const { rows } = await sql<{ allowed: boolean }>`SELECT has_table_privilege('plans', 'DELETE') AS allowed`.execute(db)
  return rows[0]!.allowed
}

export async function planExists(db: Db, name: string): Promise<boolean> {
  return (await db.selectFrom('plans').select('name').where('name', '=', name).executeTakeFirst()) !== undefined
}

/**
 * The plan with this name, made if it is not there, its row locked until the transaction ends so
 * that changes to one plan queue; `before`: the plan as it was, undefined when this transaction made it.
 */
export async function lockOrCreatePlan(
  db: Transaction<Database>,
  name: string
): Promise<{ before: PlanRecord | undefined }> {
  const inserted = await db
    .insertInto('plans')
    .values({ name })
    .onConflict((oc) => oc.column('name').doNothing())
    .returning('name')
    .executeTakeFirst()
  await db.selectFrom('plans').select('name').where('name', '=', name).forUpdate().executeTakeFirstOrThrow()
  return { before: inserted ? undefined : await getPlan(db, name) }
}

/** Replaces the plan's limits and costs with these; the plan's row must be locked (lockOrCreatePlan). */
export async function replacePlan(
  db: Transaction<Database>,
  name: string,
  limits: PlanLimit[],
  costs: Record<string, number>
): Promise<PlanRecord> {
  await db.deleteFrom('plan_limits').where('plan', '=', name).execute()
  await db.deleteFrom('plan_costs').where('plan', '=', name).execute()
  await db
    .insertInto('plan_limits')
    .values(limits.map((limit) => ({ plan: name, ...limit })))
    .execute()
  const routes = Object.entries(costs)
  if (routes.length) {
    await db
      .insertInto('plan_costs')
      .values(routes.map(([route, cost]) => ({ plan: name, route, cost })))
      .execute()
  }
  await db
    .updateTable('plans')
    .set({ updated_at: sql`now()` })
    .where('name', '=', name)
    .execute()
  return (await getPlan(db, name))!
}

/**
 * Locks the plan's row and deletes it with its limits and costs; `before`: the plan as it was,
 * undefined when there was none. Fails (a foreign key) while an account is on it.
 */
export async function deletePlan(db: Transaction<Database>, name: string): Promise<{ before: PlanRecord | undefined }> {
  const locked = await db.selectFrom('plans').select('name').where('name', '=', name).forUpdate().executeTakeFirst()
  if (!locked) return { before: undefined }
  const before = await getPlan(db, name)
  await db.deleteFrom('plans').where('name', '=', name).execute()
  return { before }
}

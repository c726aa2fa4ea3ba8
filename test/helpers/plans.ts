import type { Kysely } from 'kysely'
import type { Database, LimitWindow } from '../../src/db/schema.js'
import { lockOrCreatePlan, replacePlan, type PlanLimit } from '../../src/repositories/plans.js'

/** A plan's limit as a test gives it: its window and limit, the rest as a plan's default (fixed, enforced, the calendar's). */
export type TestLimit = Pick<PlanLimit, 'window' | 'limit'> & Partial<PlanLimit>

/** A limit of `limit` a `window`, fixed, enforced, on the calendar: the shorthand of `addPlan`. */
export type WindowLimit = [window: LimitWindow, limit: number]

/**
 * Makes (or replaces) the plan with these limits and costs, through the repository the admin API
 * writes plans with, in one transaction and without an audit or webhook event.
 */
export async function addPlan(
  db: Kysely<Database>,
  name: string,
  limits: readonly (TestLimit | WindowLimit)[],
  costs: Record<string, number> = {}
): Promise<void> {
  const complete = limits.map((given): PlanLimit => {
    const { window, limit, ...rest } = Array.isArray(given) ? { window: given[0], limit: given[1] } : given
    return { window, limit, algorithm: 'fixed', burst: null, shadow: false, anchor: 'calendar', ...rest }
  })
  await db.transaction().execute(async (tx) => {
    await lockOrCreatePlan(tx, name)
    await replacePlan(tx, name, complete, costs)
  })
}

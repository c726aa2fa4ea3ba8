import type { Kysely, Transaction } from 'kysely'
import type { Database, LimitAlgorithm, LimitWindow } from '../db/schema.js'
import { ApiKeyError } from '../repositories/api-keys.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import {
  getPlan as getPlanRow,
  listPlans as listPlanRows,
  lockOrCreatePlan,
  planExists,
  replacePlan,
  WINDOWS,
  type Limit,
  type PlanRecord
} from '../repositories/plans.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import { PUBLIC_ROUTES } from '../routes/public-routes.js'
import { changedFields, type Actor } from './rules.js'

// What the CLI and the admin API do with plans: the rules of a plan's limits and costs, and an audit
// event and a `plan.changed` webhook event in the transaction of every change. Nothing here knows of
// HTTP or of the terminal.

type Db = Kysely<Database>

/** No plan has this name. */
export class PlanNotFoundError extends Error {}

const PLAN_NAME = /^[a-z0-9-]{1,40}$/
const MAX_LIMITS = WINDOWS.length
const MAX_LIMIT = 2_000_000_000
const MAX_COST = 1000
const ALGORITHMS: readonly LimitAlgorithm[] = ['fixed', 'bucket']

/** A limit as a request gives it: algorithm and burst may be left out. */
export interface LimitInput {
  window: string
  limit: number
  algorithm?: string
  burst?: number | null
}

/** A plan as operators see it, in the CLI's --json, the admin API and `plan.changed` events. */
export function describePlan(plan: PlanRecord) {
  return {
    name: plan.name,
    limits: plan.limits.map(describeLimit),
    costs: plan.costs,
    createdAt: plan.createdAt.toISOString(),
    updatedAt: plan.updatedAt.toISOString()
  }
}

export const describeLimit = (limit: Limit) => ({
  window: limit.window,
  algorithm: limit.algorithm,
  limit: limit.limit,
  burst: limit.burst
})

function checkPlanName(name: string): string {
  if (!PLAN_NAME.test(name)) {
    throw new ApiKeyError(`A plan's name is 1 to 40 lowercase letters, digits and hyphens, not '${name}'`)
  }
  return name
}

/** Refuses a plan name the plans table does not hold: 400 on the admin API, exit code 2 on the CLI. */
export async function checkPlanExists(db: Db | Transaction<Database>, name: string): Promise<string> {
  if (!PLAN_NAME.test(name) || !(await planExists(db, name))) throw new ApiKeyError(`No plan is named '${name}'`)
  return name
}

/** One limit, checked, with its defaults: `fixed`, and a bucket's burst its limit (stored as null). */
function checkLimit(input: LimitInput, field: string): Limit {
  if (!WINDOWS.includes(input.window as LimitWindow)) {
    throw new ApiKeyError(`${field}.window must be one of ${WINDOWS.join(', ')}, not '${input.window}'`)
  }
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_LIMIT) {
    throw new ApiKeyError(`${field}.limit must be a whole number from 1 to ${MAX_LIMIT}`)
  }
  const algorithm = input.algorithm ?? 'fixed'
  if (!ALGORITHMS.includes(algorithm as LimitAlgorithm)) {
    throw new ApiKeyError(`${field}.algorithm must be fixed or bucket, not '${algorithm}'`)
  }
  const burst = input.burst ?? null
  if (burst !== null) {
    if (algorithm !== 'bucket') throw new ApiKeyError(`${field}.burst is for a bucket; a fixed window has none`)
    if (!Number.isInteger(burst) || burst < 1 || burst > MAX_LIMIT) {
      throw new ApiKeyError(`${field}.burst must be a whole number from 1 to ${MAX_LIMIT}`)
    }
  }
  return { window: input.window as LimitWindow, algorithm: algorithm as LimitAlgorithm, limit: input.limit, burst }
}

/** Limits, at most one per window, in window order. */
export function checkLimits(inputs: readonly LimitInput[], field: string, min: number): Limit[] {
  if (inputs.length < min || inputs.length > MAX_LIMITS) {
    throw new ApiKeyError(`${field} must hold ${min} to ${MAX_LIMITS} limits, one per window`)
  }
  const limits = inputs.map((input, i) => checkLimit(input, `${field}[${i}]`))
  const windows = limits.map((limit) => limit.window)
  const twice = windows.find((window, i) => windows.indexOf(window) !== i)
  if (twice) throw new ApiKeyError(`${field} has two limits for the ${twice}; one per window`)
  return limits.sort((a, b) => WINDOWS.indexOf(a.window) - WINDOWS.indexOf(b.window))
}

/** Costs of routes of the public API, each a whole number of units from 0 to 1,000. */
function checkCosts(costs: Record<string, number>): Record<string, number> {
  for (const [route, cost] of Object.entries(costs)) {
    if (!PUBLIC_ROUTES.includes(route)) {
      throw new ApiKeyError(
        `costs names '${route}', which is no route of the public API; routes are ${PUBLIC_ROUTES.join(', ')}`
      )
    }
    if (!Number.isInteger(cost) || cost < 0 || cost > MAX_COST) {
      throw new ApiKeyError(`costs['${route}'] must be a whole number from 0 to ${MAX_COST}`)
    }
  }
  return Object.fromEntries(Object.entries(costs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

export const listPlans = (db: Db) => listPlanRows(db)

export async function getPlanByName(db: Db, name: string): Promise<PlanRecord> {
  const plan = PLAN_NAME.test(name) ? await getPlanRow(db, name) : undefined
  if (!plan) throw new PlanNotFoundError(`No plan is named '${name}'`)
  return plan
}

/** A plan as `plan.changed` events carry it (docs/webhooks.md). */
export const planEvent = (plan: { name: string; limits: Limit[]; costs: Record<string, number> }) => ({
  name: plan.name,
  limits: plan.limits.map(describeLimit),
  costs: plan.costs
})

/**
 * Makes the plan or replaces its limits and costs, with an audit event naming it and a `plan.changed`
 * event, in one transaction with the plan's row locked. Accounts on the plan follow on every instance
 * within a second. A plan put again as it is changes nothing and records nothing.
 */
export async function putPlan(
  db: Db,
  actor: Actor,
  name: string,
  body: { limits: readonly LimitInput[]; costs?: Record<string, number> }
): Promise<{ plan: PlanRecord; created: boolean }> {
  checkPlanName(name)
  const limits = checkLimits(body.limits, 'limits', 1)
  const costs = checkCosts(body.costs ?? {})
  return db.transaction().execute(async (trx) => {
    const { before } = await lockOrCreatePlan(trx, name)
    const fields = (plan: { limits: Limit[]; costs: Record<string, number> } | undefined) =>
      plan && { limits: plan.limits.map(describeLimit), costs: plan.costs }
    const changes = changedFields(fields(before) ?? null, fields({ limits, costs })!)
    if (before && Object.keys(changes).length === 0) return { plan: before, created: false }
    const plan = await replacePlan(trx, name, limits, costs)
    await appendAuditEvent(trx, {
      ...actor,
      action: before ? 'plan.changed' : 'plan.created',
      accountId: null,
      keyId: null,
      changes: { plan: { before: before ? name : null, after: name }, ...changes }
    })
    await appendWebhookEvent(trx, { type: 'plan.changed', accountId: null, data: { plan: planEvent(plan) } })
    return { plan, created: !before }
  })
}

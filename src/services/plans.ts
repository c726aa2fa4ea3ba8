import type { Kysely, Transaction } from 'kysely'
import type { Database, LimitAlgorithm, LimitWindow } from '../db/schema.js'
import { InvalidInputError, NotFoundError } from '../errors.js'
import { countAccountsOnPlans } from '../repositories/accounts.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import {
  deletePlan as deletePlanRow,
  getPlan as getPlanRow,
  listPlanNames,
  listPlans as listPlanRows,
  lockOrCreatePlan,
  mayDeletePlans,
  planExists,
  byWindow,
  replacePlan,
  WINDOWS,
  type Limit,
  type LimitAnchor,
  type PlanLimit,
  type PlanRecord
} from '../repositories/plans.js'
import { appendWebhookEvent } from '../repositories/webhook-events.js'
import { ROUTE_NAME } from '../limits/route-costs.js'
import { PUBLIC_ROUTES } from '../routes/public-routes.js'
import { changedFields, type Actor } from './rules.js'

// What the CLI and the admin API do with plans: the rules of a plan's limits and costs, and an audit
// event and a `plan.changed` webhook event in the transaction of every change. Nothing here knows of
// HTTP or of the terminal.

type Db = Kysely<Database>

/** A plan named where a plan's name is asked for that the plans table does not hold; `known`: the plans it does. */
export class UnknownPlanError extends InvalidInputError {
  constructor(
    name: string,
    readonly known: string[]
  ) {
    super(`No plan is named '${name}'`)
  }
}

const PLAN_NAME = /^[a-z0-9-]{1,40}$/
const MAX_LIMITS = WINDOWS.length
/** The most units a limit or burst may be: what plan_limits' and account_limit_overrides' checks take. */
export const MAX_LIMIT = 2_000_000_000
export const MAX_COST = 1000
const ALGORITHMS: readonly LimitAlgorithm[] = ['fixed', 'bucket']
const ANCHORS: readonly LimitAnchor[] = ['calendar', 'account']

/** A limit as a request gives it: algorithm and burst may be left out. */
export interface LimitInput {
  window: string
  limit: number
  algorithm?: string
  burst?: number | null
  /** Where a month starts: calendar (the default) or account, the account's cycleAnchor. */
  anchor?: string
}

/** A limit with where its month starts. */
type AnchoredLimit = Limit & { anchor: LimitAnchor }

/** A plan's limit as a request gives it: a shadow only when `shadow` is true. */
export interface PlanLimitInput extends LimitInput {
  shadow?: boolean
}

/** A plan as operators see it, in the CLI's --json, the admin API and `plan.changed` events. */
export function describePlan(plan: PlanRecord) {
  return {
    name: plan.name,
    limits: plan.limits.map(describePlanLimit),
    costs: plan.costs,
    createdAt: plan.createdAt.toISOString(),
    updatedAt: plan.updatedAt.toISOString()
  }
}

/** A limit as shown: `anchor` only on a month that follows the account's cycleAnchor. */
export const describeLimit = (limit: Limit & { anchor?: LimitAnchor }) => ({
  window: limit.window,
  algorithm: limit.algorithm,
  limit: limit.limit,
  burst: limit.burst,
  ...(limit.anchor === 'account' ? { anchor: limit.anchor } : {})
})

const describePlanLimit = (limit: PlanLimit) => ({ ...describeLimit(limit), shadow: limit.shadow })

function checkPlanName(name: string): string {
  if (!PLAN_NAME.test(name)) {
    throw new InvalidInputError(`A plan's name is 1 to 40 lowercase letters, digits and hyphens, not '${name}'`)
  }
  return name
}

/** Refuses a plan name the plans table does not hold: 400 on the admin API, exit code 2 on the CLI. */
export async function checkPlanExists(db: Db | Transaction<Database>, name: string): Promise<string> {
  if (!PLAN_NAME.test(name) || !(await planExists(db, name))) throw new UnknownPlanError(name, await listPlanNames(db))
  return name
}

/**
 * One limit, checked, with its defaults: `fixed`, a bucket's burst its limit (stored as null), and the
 * calendar's month.
 */
function checkLimit(input: LimitInput, field: string): AnchoredLimit {
  if (!WINDOWS.includes(input.window as LimitWindow)) {
    throw new InvalidInputError(`${field}.window must be one of ${WINDOWS.join(', ')}, not '${input.window}'`)
  }
  if (!Number.isInteger(input.limit) || input.limit < 1 || input.limit > MAX_LIMIT) {
    throw new InvalidInputError(`${field}.limit must be a whole number from 1 to ${MAX_LIMIT}`)
  }
  const algorithm = input.algorithm ?? 'fixed'
  if (!ALGORITHMS.includes(algorithm as LimitAlgorithm)) {
    throw new InvalidInputError(`${field}.algorithm must be fixed or bucket, not '${algorithm}'`)
  }
  const burst = input.burst ?? null
  if (burst !== null) {
    if (algorithm !== 'bucket') throw new InvalidInputError(`${field}.burst is for a bucket; a fixed window has none`)
    if (!Number.isInteger(burst) || burst < 1 || burst > MAX_LIMIT) {
      throw new InvalidInputError(`${field}.burst must be a whole number from 1 to ${MAX_LIMIT}`)
    }
  }
  const anchor = input.anchor ?? 'calendar'
  if (!ANCHORS.includes(anchor as LimitAnchor)) {
    throw new InvalidInputError(`${field}.anchor must be calendar or account, not '${anchor}'`)
  }
  if (anchor === 'account' && (input.window !== 'month' || algorithm !== 'fixed')) {
    throw new InvalidInputError(`${field}.anchor account is for a fixed month; other windows follow the calendar`)
  }
  return {
    window: input.window as LimitWindow,
    algorithm: algorithm as LimitAlgorithm,
    limit: input.limit,
    burst,
    anchor: anchor as LimitAnchor
  }
}

/** Limits, at most one per window, in window order. */
export function checkLimits(inputs: readonly LimitInput[], field: string, min: number): AnchoredLimit[] {
  if (inputs.length < min || inputs.length > MAX_LIMITS) {
    throw new InvalidInputError(`${field} must hold ${min} to ${MAX_LIMITS} limits, one per window`)
  }
  const limits = inputs.map((input, i) => checkLimit(input, `${field}[${i}]`))
  const windows = limits.map((limit) => limit.window)
  const twice = windows.find((window, i) => windows.indexOf(window) !== i)
  if (twice) throw new InvalidInputError(`${field} has two limits for the ${twice}; one per window`)
  return limits.sort((a, b) => WINDOWS.indexOf(a.window) - WINDOWS.indexOf(b.window))
}

/**
 * A plan's limits: at most one enforced and one shadow limit per window (a shadow tries a tighter
 * figure beside the one in force), in window order, the enforced limit first.
 */
function checkPlanLimits(inputs: readonly PlanLimitInput[], field: string): PlanLimit[] {
  if (inputs.length < 1 || inputs.length > 2 * MAX_LIMITS) {
    throw new InvalidInputError(
      `${field} must hold 1 to ${2 * MAX_LIMITS} limits, one enforced and one shadow limit per window at most`
    )
  }
  const limits = inputs.map((input, i): PlanLimit => {
    const shadow = input.shadow ?? false
    if (typeof shadow !== 'boolean') throw new InvalidInputError(`${field}[${i}].shadow must be true or false`)
    return { ...checkLimit(input, `${field}[${i}]`), shadow }
  })
  const twice = limits.find(
    (limit, i) => limits.findIndex((other) => other.window === limit.window && other.shadow === limit.shadow) !== i
  )
  if (twice) {
    throw new InvalidInputError(
      twice.shadow
        ? `${field} has two shadow limits for the ${twice.window}; one shadow limit per window`
        : `${field} has two limits for the ${twice.window}; one per window`
    )
  }
  return limits.sort(byWindow)
}

/** Costs by route in one order, whatever order they were read or given in. */
const sortedCosts = (costs: Record<string, number>) =>
  Object.fromEntries(Object.entries(costs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

/** The public API's resources (`/v1/pets`): a route under one of them must be one the API has. */
const PUBLIC_RESOURCES = [...new Set(PUBLIC_ROUTES.map((route) => route.split(' ')[1]!.split('/', 3).join('/')))]
const isPublicResource = (route: string) => {
  const path = route.slice(route.indexOf(' ') + 1)
  return PUBLIC_RESOURCES.some((resource) => path === resource || path.startsWith(`${resource}/`))
}

/**
 * Costs of routes, each a whole number of units from 0 to 1,000: of the public API, as its document
 * names them, or of any other service that asks through decisions or authorize (`GET /v1/orders/{id}`).
 */
function checkCosts(costs: Record<string, number>, field = 'costs'): Record<string, number> {
  for (const [route, cost] of Object.entries(costs)) {
    if (!ROUTE_NAME.test(route)) {
      throw new InvalidInputError(
        `${field} names '${route}', which is no route: a method in capitals, a space, a path from /`
      )
    }
    // A misspelt route of this API would silently cost 1.
    if (isPublicResource(route) && !PUBLIC_ROUTES.includes(route)) {
      throw new InvalidInputError(
        `${field} names '${route}', which is no route of the public API; routes are ${PUBLIC_ROUTES.join(', ')}`
      )
    }
    if (!Number.isInteger(cost) || cost < 0 || cost > MAX_COST) {
      throw new InvalidInputError(`${field}['${route}'] must be a whole number from 0 to ${MAX_COST}`)
    }
  }
  return sortedCosts(costs)
}

export const listPlans = (db: Db) => listPlanRows(db)

export async function getPlanByName(db: Db, name: string): Promise<PlanRecord> {
  const plan = PLAN_NAME.test(name) ? await getPlanRow(db, name) : undefined
  if (!plan) throw new NotFoundError(`No plan is named '${name}'`)
  return plan
}

/** A plan as `plan.changed` events carry it (docs/webhooks.md). */
export const planEvent = (plan: { name: string; limits: PlanLimit[]; costs: Record<string, number> }) => ({
  name: plan.name,
  limits: plan.limits.map(describePlanLimit),
  costs: plan.costs
})

/** A plan's limits and costs, checked: what a change replaces whole. */
interface PlanBody {
  limits: PlanLimit[]
  costs: Record<string, number>
}

const bodyFields = (plan: PlanBody | undefined) =>
  plan && { limits: plan.limits.map(describePlanLimit), costs: sortedCosts(plan.costs) }

/**
 * Makes the plan or replaces its limits and costs, with an audit event naming it and a `plan.changed`
 * event, in one transaction with the plan's row locked. Accounts on the plan follow on every instance
 * within a second. A plan put again as it is changes nothing and records nothing.
 */
export async function putPlan(
  db: Db,
  actor: Actor,
  name: string,
  body: { limits: readonly PlanLimitInput[]; costs?: Record<string, number> }
): Promise<{ plan: PlanRecord; created: boolean }> {
  checkPlanName(name)
  const checked = { limits: checkPlanLimits(body.limits, 'limits'), costs: checkCosts(body.costs ?? {}) }
  return db.transaction().execute((trx) => savePlan(trx, actor, name, checked))
}

/** putPlan's change within the caller's transaction, on a name and body already checked. */
async function savePlan(
  trx: Transaction<Database>,
  actor: Actor,
  name: string,
  { limits, costs }: PlanBody
): Promise<{ plan: PlanRecord; created: boolean }> {
  const { before } = await lockOrCreatePlan(trx, name)
  const changes = changedFields(bodyFields(before) ?? null, bodyFields({ limits, costs })!)
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
}

/** A plan as a plans file lists it: what PUT /admin/v1/plans/{name} takes, and its name. */
export interface PlanDefinition {
  name: string
  limits: PlanLimitInput[]
  costs?: Record<string, number>
}

/**
 * A plan as a plans file lists it, leaving out what is the default: a fixed window, a burst of its
 * limit, an enforced limit, no costs.
 */
function definePlan(plan: { name: string } & PlanBody): PlanDefinition {
  return {
    name: plan.name,
    limits: plan.limits.map((limit) => ({
      window: limit.window,
      limit: limit.limit,
      ...(limit.algorithm === 'fixed' ? {} : { algorithm: limit.algorithm }),
      ...(limit.burst === null ? {} : { burst: limit.burst }),
      ...(limit.shadow ? { shadow: true } : {}),
      ...(limit.anchor === 'calendar' ? {} : { anchor: limit.anchor })
    })),
    ...(Object.keys(plan.costs).length ? { costs: sortedCosts(plan.costs) } : {})
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function checkKeys(value: Record<string, unknown>, allowed: readonly string[], field: string) {
  const unknown = Object.keys(value).find((key) => !allowed.includes(key))
  if (unknown !== undefined) throw new InvalidInputError(`${field} has '${unknown}'; it may have ${allowed.join(', ')}`)
}

/** A checked plan of a plans file. */
export interface CheckedPlan extends PlanBody {
  name: string
}

/**
 * A plans file as read (YAML or JSON): a list of plans, each checked as putPlan checks a plan, every
 * name once. The first problem is refused, named by where it is (`plans[2].limits[0].window`).
 */
export function checkPlanDefinitions(value: unknown): CheckedPlan[] {
  if (!Array.isArray(value)) {
    throw new InvalidInputError('a plans file is a list of plans, each with name, limits and costs')
  }
  const seen = new Set<string>()
  return value.map((entry: unknown, i) => {
    const field = `plans[${i}]`
    if (!isRecord(entry)) throw new InvalidInputError(`${field} must be a plan: name, limits and costs`)
    checkKeys(entry, ['name', 'limits', 'costs'], field)
    if (typeof entry.name !== 'string') throw new InvalidInputError(`${field}.name must be the plan's name`)
    const name = checkPlanName(entry.name)
    if (seen.has(name)) throw new InvalidInputError(`${field} names '${name}' again; each plan is listed once`)
    seen.add(name)
    if (!Array.isArray(entry.limits)) {
      throw new InvalidInputError(`${field}.limits must be a list of 1 to ${MAX_LIMITS} limits`)
    }
    entry.limits.forEach((limit: unknown, j) => {
      if (!isRecord(limit)) {
        throw new InvalidInputError(
          `${field}.limits[${j}] must be a limit: window, limit, algorithm, burst, shadow, anchor`
        )
      }
      checkKeys(limit, ['window', 'limit', 'algorithm', 'burst', 'shadow', 'anchor'], `${field}.limits[${j}]`)
    })
    if (entry.costs !== undefined && !isRecord(entry.costs)) {
      throw new InvalidInputError(`${field}.costs must map routes to their costs`)
    }
    return {
      name,
      limits: checkPlanLimits(entry.limits as PlanLimitInput[], `${field}.limits`),
      costs: checkCosts((entry.costs ?? {}) as Record<string, number>, `${field}.costs`)
    }
  })
}

/** One difference between a plans file and the plans table. */
export type PlanChange =
  | { action: 'create'; name: string; before: null; after: PlanDefinition }
  | { action: 'change'; name: string; before: PlanDefinition; after: PlanDefinition }
  | { action: 'delete'; name: string; before: PlanDefinition; after: null }

/** What applying a plans file does: its changes in name order, and the plans it leaves as they are because it does not list them. */
export interface PlansApplied {
  changes: PlanChange[]
  unlisted: string[]
}

const sameBody = (a: PlanBody, b: PlanBody) => JSON.stringify(bodyFields(a)) === JSON.stringify(bodyFields(b))

/** The changes that make `current` match `wanted`; the plans it does not list are deleted with `prune`. */
function comparePlans(current: PlanRecord[], wanted: CheckedPlan[], prune: boolean): PlansApplied {
  const listed = new Map(wanted.map((plan) => [plan.name, plan]))
  const existing = new Map(current.map((plan) => [plan.name, plan]))
  const changes: PlanChange[] = []
  const unlisted: string[] = []
  for (const name of [...new Set([...listed.keys(), ...existing.keys()])].sort()) {
    const before = existing.get(name)
    const after = listed.get(name)
    if (after && !before) changes.push({ action: 'create', name, before: null, after: definePlan(after) })
    else if (after && before && !sameBody(before, after)) {
      changes.push({ action: 'change', name, before: definePlan(before), after: definePlan(after) })
    } else if (!after && before) {
      if (prune) changes.push({ action: 'delete', name, before: definePlan(before), after: null })
      else unlisted.push(name)
    }
  }
  return { changes, unlisted }
}

/**
 * Makes the plans table match a plans file (checkPlanDefinitions): each plan it lists is made or
 * replaced as putPlan does, with its audit and `plan.changed` events; a plan it does not list is left
 * as it is, or with `prune` deleted (an audit event `plan.deleted`), but never while an account, open
 * or closed, is on it, and only by a role that may delete plans (the schema's owner, not the
 * service's role): else nothing is changed. All in one transaction, plans locked in name order;
 * a plan already as listed is not touched, so the same file applied again changes nothing. With
 * `dryRun`, only says what it would change.
 */
export async function applyPlans(
  db: Db,
  actor: Actor,
  wanted: CheckedPlan[],
  options: { prune: boolean; dryRun: boolean }
): Promise<PlansApplied> {
  const run = async (trx: Db | Transaction<Database>) => {
    const applied = comparePlans(await listPlanRows(trx), wanted, options.prune)
    const deleted = applied.changes.filter((change) => change.action === 'delete').map((change) => change.name)
    if (deleted.length === 0) return applied
    const inUse = await countAccountsOnPlans(trx, deleted)
    if (inUse.size) {
      const named = [...inUse].map(([plan, count]) => `'${plan}' (${count} account${count === 1 ? '' : 's'})`)
      throw new Error(
        `The file leaves out plans that accounts are on, and such a plan is never deleted: ${named.join(', ')}; ` +
          'move those accounts to another plan, or list the plans in the file. Nothing was changed'
      )
    }
    if (!(await mayDeletePlans(trx))) {
      throw new Error(
        `Deleting plans (${deleted.join(', ')}) needs a database role that may, as the schema's owner does; ` +
          "the service's role may not. Nothing was changed"
      )
    }
    return applied
  }
  if (options.dryRun) return run(db)
  return db.transaction().execute(async (trx) => {
    const applied = await run(trx)
    const byName = new Map(wanted.map((plan) => [plan.name, plan]))
    for (const change of applied.changes) {
      if (change.action === 'delete') await deletePlan(trx, actor, change.name)
      else await savePlan(trx, actor, change.name, byName.get(change.name)!)
    }
    return applied
  })
}

/** Deletes the plan with an audit event `plan.deleted`; no account may be on it (a foreign key holds to that). */
async function deletePlan(trx: Transaction<Database>, actor: Actor, name: string): Promise<void> {
  const { before } = await deletePlanRow(trx, name)
  if (!before) return
  await appendAuditEvent(trx, {
    ...actor,
    action: 'plan.deleted',
    accountId: null,
    keyId: null,
    changes: {
      plan: { before: name, after: null },
      ...changedFields(bodyFields(before)!, { limits: null, costs: null })
    }
  })
}

/** Every plan as a plans file lists it, in name order. */
export const exportPlans = async (db: Db): Promise<PlanDefinition[]> => (await listPlanRows(db)).map(definePlan)

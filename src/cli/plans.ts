import type { PlanRecord } from '../repositories/plans.js'
import { describePlan, getPlanByName, listPlans, putPlan, type LimitInput } from '../services/plans.js'
import {
  cliActor,
  dispatch,
  printable,
  printTable,
  subcommand,
  toJson,
  UsageError,
  type Subcommand,
  type WithDatabase
} from './common.js'

const USAGE = {
  plans: `Usage: npm run --silent cli -- plans <list|show|put> [options]

  list [--json]
  show NAME [--json]
  put NAME --limit WINDOW=N[:bucket[:BURST]] ... [--cost 'METHOD /v1/path=N' ...] [--json]

A plan is its limits (1 to 5, one per window) and its costs per route. Every account on a plan
follows a change on every instance within a second.`,
  list: `Usage: npm run --silent cli -- plans list [--json]

Lists every plan with its limits and costs.`,
  show: `Usage: npm run --silent cli -- plans show NAME [--json]`,
  put: `Usage: npm run --silent cli -- plans put NAME --limit WINDOW=N[:bucket[:BURST]] ... [--cost 'ROUTE=N' ...] [--json]

Makes the plan, or replaces its limits and costs whole.
  --limit WINDOW=N[:bucket[:BURST]]  N units a second, minute, hour, day or month (the UTC calendar
                                     month); a fixed window, or a token bucket holding at most BURST
                                     (default N). Once per window, 1 to 5 times.
  --cost 'ROUTE=N'                   a request of ROUTE ('POST /v1/pets', 'GET /v1/pets/{petId}')
                                     costs N units, 0 to 1000; a route not named costs 1
  --json                             print one JSON object`
}

const LIMIT = /^([a-z]+)=([0-9]{1,10})(?::(fixed|bucket)(?::([0-9]{1,10}))?)?$/

/** `minute=60`, `minute=60:bucket`, `minute=60:bucket:120` as a limit; the service checks the rest. */
export function limitArgument(text: string, option = '--limit'): LimitInput {
  const match = LIMIT.exec(text)
  if (!match) {
    throw new UsageError(
      `${option} must read WINDOW=N[:bucket[:BURST]], as minute=60:bucket:120, not '${printable(text)}'`
    )
  }
  const [, window, limit, algorithm, burst] = match
  return {
    window: window!,
    limit: Number(limit),
    ...(algorithm === undefined ? {} : { algorithm }),
    ...(burst === undefined ? {} : { burst: Number(burst) })
  }
}

function costArgument(text: string): [string, number] {
  const match = /^(.+)=([0-9]{1,4})$/.exec(text)
  if (!match) throw new UsageError(`--cost must read 'METHOD /v1/path=N', not '${printable(text)}'`)
  return [match[1]!, Number(match[2])]
}

const limitText = (limit: PlanRecord['limits'][number]) =>
  `${limit.limit}/${limit.window}` +
  (limit.algorithm === 'bucket' ? ` bucket${limit.burst === null ? '' : ` burst ${limit.burst}`}` : '')

function printPlans(plans: PlanRecord[]) {
  printTable([
    ['NAME', 'LIMITS', 'COSTS'],
    ...plans.map((plan) => [
      plan.name,
      plan.limits.map(limitText).join(', '),
      Object.entries(plan.costs)
        .map(([route, cost]) => `${route}=${cost}`)
        .join(', ') || '-'
    ])
  ])
}

function nameArgument(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected one plan name; ${usage.split('\n')[0]}`)
  return positionals[0]!
}

const planSubcommands: Record<string, Subcommand> = {
  list: subcommand(USAGE.list, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    if (positionals.length) throw new UsageError(`unexpected argument '${printable(positionals[0]!)}'`)
    const plans = await withDatabase((db) => listPlans(db))
    if (values.json) console.log(toJson(plans.map(describePlan)))
    else printPlans(plans)
  }),

  show: subcommand(USAGE.show, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    const name = nameArgument(positionals, USAGE.show)
    const plan = await withDatabase((db) => getPlanByName(db, name))
    if (values.json) console.log(toJson(describePlan(plan)))
    else printPlans([plan])
  }),

  put: subcommand(
    USAGE.put,
    { limit: { type: 'string', multiple: true }, cost: { type: 'string', multiple: true }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      const name = nameArgument(positionals, USAGE.put)
      if (!values.limit?.length) throw new UsageError('--limit is required: WINDOW=N[:bucket[:BURST]], once per window')
      const limits = values.limit.map((text) => limitArgument(text))
      const costs = Object.fromEntries((values.cost ?? []).map(costArgument))
      const { plan, created } = await withDatabase((db) => putPlan(db, cliActor(), name, { limits, costs }))
      if (values.json) console.log(toJson(describePlan(plan)))
      else console.log(`${created ? 'Created' : 'Saved'} plan ${plan.name}: ${plan.limits.map(limitText).join(', ')}`)
    }
  )
}

export const plans = (args: string[], withDatabase: WithDatabase) =>
  dispatch('plans', USAGE.plans, planSubcommands, args, withDatabase)

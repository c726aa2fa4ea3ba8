import { readFile, writeFile } from 'node:fs/promises'
import { extname } from 'node:path'
import { Argument, type Command } from '@commander-js/extra-typings'
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml'
import type { PlanRecord } from '../repositories/plans.js'
import { InvalidInputError } from '../errors.js'
import {
  applyPlans,
  checkPlanDefinitions,
  describePlan,
  exportPlans,
  getPlanByName,
  listPlans,
  putPlan,
  type PlanChange,
  type PlanDefinition
} from '../services/plans.js'
import {
  choiceOption,
  cliActor,
  jsonOption,
  parseLimit,
  printable,
  repeatedOption,
  table,
  toJson,
  UsageError,
  type Cli
} from './common.js'

function parseCost(text: string): [string, number] {
  const match = /^(.+)=([0-9]{1,4})$/.exec(text)
  if (!match) throw new UsageError(`--cost must read 'METHOD /v1/path=N', not '${printable(text)}'`)
  return [match[1]!, Number(match[2])]
}

const limitText = (limit: {
  window: string
  limit: number
  algorithm?: string
  burst?: number | null
  shadow?: boolean
  anchor?: string
}) =>
  `${limit.limit}/${limit.window}` +
  (limit.algorithm === 'bucket' ? ` bucket${limit.burst == null ? '' : ` burst ${limit.burst}`}` : '') +
  (limit.anchor === 'account' ? ' from the account’s cycle anchor' : '') +
  (limit.shadow ? ' shadow' : '')

const costsText = (costs: Record<string, number> = {}) =>
  Object.entries(costs)
    .map(([route, cost]) => `${route}=${cost}`)
    .join(', ') || '-'

const plansTable = (plans: PlanRecord[]) =>
  table([
    ['NAME', 'LIMITS', 'COSTS'],
    ...plans.map((plan) => [plan.name, plan.limits.map(limitText).join(', '), costsText(plan.costs)])
  ])

const definitionText = (plan: PlanDefinition) =>
  `${plan.limits.map(limitText).join(', ')}; costs ${costsText(plan.costs)}`

/** A change as a line of a diff: + made, ~ replaced (before -> after), - deleted. */
function changeText(change: PlanChange): string {
  switch (change.action) {
    case 'create':
      return `+ ${change.name}: ${definitionText(change.after)}`
    case 'change':
      return `~ ${change.name}: ${definitionText(change.before)} -> ${definitionText(change.after)}`
    case 'delete':
      return `- ${change.name}: ${definitionText(change.before)}`
  }
}

type FileFormat = 'yaml' | 'json'
const FORMATS: readonly FileFormat[] = ['yaml', 'json']

/** JSON for a .json file, YAML for any other. */
const formatOf = (path: string): FileFormat => (extname(path).toLowerCase() === '.json' ? 'json' : 'yaml')

/** The plans file at `path`, read and checked; every problem is a usage error naming the file. */
async function readPlansFile(path: string) {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
  }
  try {
    // YAML holds JSON: one parser reads both.
    return checkPlanDefinitions(parseYaml(text))
  } catch (error) {
    if (error instanceof InvalidInputError || (error as Error).name === 'YAMLParseError') {
      throw new UsageError(`${path}: ${(error as Error).message.split('\n')[0]}`)
    }
    throw error
  }
}

/** `plans`: list, show, make and change plans, and keep them in a file. */
export function plansCommand(program: Command, cli: Cli) {
  const plans = program
    .command('plans')
    .description('List, show, make and change plans: limits and costs per route; apply and export a plans file')
    .addHelpText(
      'after',
      '\nA plan is its limits (1 to 10: per window one enforced and one shadow) and its costs per route.\nEvery account on a plan ' +
        'follows a change on every instance within a second.'
    )

  plans
    .command('list')
    .description('List every plan with its limits and costs')
    .addOption(jsonOption('print one JSON array'))
    .action(async (options) => {
      const plans = await cli.withDatabase((db) => listPlans(db))
      cli.print(options.json ? toJson(plans.map(describePlan)) : plansTable(plans))
    })

  plans
    .command('show')
    .description('One plan')
    .addArgument(new Argument('<name>', "the plan's name"))
    .addOption(jsonOption())
    .action(async (name, options) => {
      const plan = await cli.withDatabase((db) => getPlanByName(db, name))
      cli.print(options.json ? toJson(describePlan(plan)) : plansTable([plan]))
    })

  plans
    .command('put')
    .description('Make the plan, or replace its limits and costs whole')
    .addArgument(new Argument('<name>', "the plan's name: 1 to 40 of a-z, 0-9 and -"))
    .addOption(
      repeatedOption(
        '--limit <WINDOW=N[:bucket[:BURST]][:shadow]|month=N:account[:shadow]>',
        'N units a second, minute, hour, day or month (the UTC calendar month; with :account, the month from ' +
          "each account's cycle anchor); a fixed window, or a token bucket holding at most BURST (default N); " +
          'with :shadow, counted and reported but never refusing. Per window once enforced and once as a shadow, ' +
          '1 to 10 times',
        parseLimit
      ).makeOptionMandatory()
    )
    .addOption(
      repeatedOption(
        "--cost <'ROUTE=N'>",
        "a request of ROUTE ('POST /v1/pets', 'GET /v1/pets/{petId}') costs N units, 0 to 1000; a route not " +
          'named costs 1',
        parseCost
      )
    )
    .addOption(jsonOption())
    .action(async (name, options) => {
      const body = { limits: options.limit, costs: Object.fromEntries(options.cost ?? []) }
      const { plan, created } = await cli.withDatabase((db) => putPlan(db, cliActor(), name, body))
      cli.print(
        options.json
          ? toJson(describePlan(plan))
          : `${created ? 'Created' : 'Saved'} plan ${plan.name}: ${plan.limits.map(limitText).join(', ')}`
      )
    })

  plans
    .command('apply')
    .description(
      "Make the database's plans match a plans file (YAML or JSON: a list of plans, each its name, limits and " +
        'costs as PUT /admin/v1/plans/{name} takes them), all in one transaction, each change an audit event. ' +
        'A plan already as listed is not touched: the same file applied again changes nothing'
    )
    .addArgument(new Argument('<file>', 'the plans file'))
    .option('--dry-run', 'print the changes and make none')
    .option(
      '--prune',
      'delete the plans that the file does not list (without it they are left as they are), as the schema ' +
        "owner (the service's role may not); a plan that an account is on is never deleted: then nothing is changed"
    )
    .addOption(jsonOption('print one JSON object: dryRun, changes [{action, name, before, after}], unlisted'))
    .action(async (file, options) => {
      const wanted = await readPlansFile(file)
      const dryRun = options.dryRun === true
      const { changes, unlisted } = await cli.withDatabase((db) =>
        applyPlans(db, cliActor(), wanted, { prune: options.prune === true, dryRun })
      )
      if (options.json) return cli.print(toJson({ dryRun, changes, unlisted }))
      for (const change of changes) cli.print(printable(changeText(change)))
      if (unlisted.length) {
        cli.print(`Not in the file, left as they are (--prune deletes them): ${unlisted.join(', ')}`)
      }
      const count = `${changes.length} change${changes.length === 1 ? '' : 's'}`
      if (changes.length === 0) cli.print('The plans match the file: nothing to change')
      else cli.print(dryRun ? `Dry run: ${count}, none made` : `Applied ${count}`)
    })

  plans
    .command('export')
    .description('Write every plan as a plans file that plans apply reads, to FILE or stdout')
    .addArgument(new Argument('[file]', 'where to write it; stdout without it'))
    .addOption(choiceOption('--format <format>', 'the file format; default json for a .json file, else yaml', FORMATS))
    .action(async (file, options) => {
      const plans = await cli.withDatabase((db) => exportPlans(db))
      const format = options.format ?? (file === undefined ? 'yaml' : formatOf(file))
      const text = format === 'json' ? `${JSON.stringify(plans, null, 2)}\n` : stringifyYaml(plans)
      if (file === undefined) {
        cli.stdout.write(text)
        return
      }
      await writeFile(file, text)
      cli.print(`Wrote ${plans.length} plan${plans.length === 1 ? '' : 's'} to ${file}`)
    })
}

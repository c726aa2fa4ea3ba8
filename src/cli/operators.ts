import { createOperator, describeOperator, listOperators, revokeOperator } from '../services/operators.js'
import {
  cliActor,
  dispatch,
  idArgument,
  noPositionals,
  printTable,
  subcommand,
  toJson,
  UsageError,
  type Subcommand,
  type WithDatabase
} from './common.js'

const USAGE = {
  operators: `Usage: npm run --silent cli -- operators <create|list|revoke> [options]

  create --name NAME --role ROLE [--json]
  list [--json]
  revoke ID

Operators call the admin API with their own token; the audit trail names them (operator:NAME).
Roles: viewer (reads only), operator (also accounts, keys and plans), admin (also operators).`,
  create: `Usage: npm run --silent cli -- operators create --name NAME --role ROLE [--json]

Makes an operator and prints its token once; only its SHA-256 hash is stored.
  --name NAME   1 to 63 characters of a-z, 0-9, ".", "_" and "-"; unique
  --role ROLE   viewer, operator or admin
  --json        print one JSON object: id, name, role, prefix, createdAt, revokedAt, token`,
  list: `Usage: npm run --silent cli -- operators list [--json]

Lists every operator with its role and state. Tokens are never shown.`,
  revoke: `Usage: npm run --silent cli -- operators revoke ID

Revokes the operator's token: every instance refuses it from its next request on.`
}

const subcommands: Record<string, Subcommand> = {
  create: subcommand(
    USAGE.create,
    { name: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } },
    async (values, positionals, withDatabase) => {
      noPositionals(positionals)
      if (values.name === undefined) throw new UsageError('--name is required')
      if (values.role === undefined) throw new UsageError('--role is required: viewer, operator or admin')
      const fields = { name: values.name, role: values.role }
      const issued = await withDatabase((db) => createOperator(db, cliActor(), fields))
      if (values.json) {
        console.log(toJson({ ...describeOperator(issued), token: issued.token }))
        return
      }
      console.log(`Created operator ${issued.id} (${issued.name}, ${issued.role})`)
      console.log('Token, shown only this once; store it now:')
      console.log(issued.token)
    }
  ),

  list: subcommand(USAGE.list, { json: { type: 'boolean' } }, async (values, positionals, withDatabase) => {
    noPositionals(positionals)
    const operators = await withDatabase((db) => listOperators(db))
    if (values.json) {
      console.log(toJson(operators.map(describeOperator)))
      return
    }
    printTable([
      ['ID', 'NAME', 'ROLE', 'PREFIX', 'STATE', 'CREATED'],
      ...operators.map((operator) => [
        String(operator.id),
        operator.name,
        operator.role,
        operator.prefix,
        operator.revokedAt ? 'revoked' : 'active',
        operator.createdAt.toISOString()
      ])
    ])
  }),

  revoke: subcommand(USAGE.revoke, {}, async (_values, positionals, withDatabase) => {
    const id = idArgument(positionals, USAGE.revoke, 'operator')
    const record = await withDatabase((db) => revokeOperator(db, cliActor(), id))
    console.log(`Revoked operator ${record.id} (${record.name})`)
  })
}

export async function operators(args: string[], withDatabase: WithDatabase) {
  await dispatch('operators', USAGE.operators, subcommands, args, withDatabase)
}

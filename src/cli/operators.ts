import type { Command } from '@commander-js/extra-typings'
import { OPERATOR_ROLES } from '../repositories/operators.js'
import { createOperator, describeOperator, listOperators, revokeOperator } from '../services/operators.js'
import { cliActor, idArgument, jsonOption, table, toJson, type Cli } from './common.js'

/** `operators`: the admin API's operators, each with a token of its own and a role. */
export function operatorsCommand(program: Command, cli: Cli) {
  const operators = program
    .command('operators')
    .description("Make, list and revoke the admin API's operators and their roles")
    .addHelpText(
      'after',
      '\nOperators call the admin API with their own token; the audit trail names them (operator:NAME).\n' +
        'Roles: viewer (reads only), operator (also accounts, keys and plans), admin (also operators),\n' +
        'service (POST /v1/decisions on the public API for other services, nothing on the admin API).'
    )

  operators
    .command('create')
    .description('Make an operator and print its token once; only its SHA-256 hash is stored')
    .requiredOption('--name <name>', '1 to 63 characters of a-z, 0-9, ".", "_" and "-"; unique')
    .requiredOption('--role <role>', `one of ${OPERATOR_ROLES.join(', ')}`)
    .addOption(jsonOption('print one JSON object: id, name, role, prefix, createdAt, revokedAt, token'))
    .action(async (options) => {
      const fields = { name: options.name, role: options.role }
      const issued = await cli.withDatabase((db) => createOperator(db, cliActor(), fields))
      if (options.json) return cli.print(toJson({ ...describeOperator(issued), token: issued.token }))
      cli.print(`Created operator ${issued.id} (${issued.name}, ${issued.role})`)
      cli.print('Token, shown only this once; store it now:')
      cli.print(issued.token)
    })

  operators
    .command('list')
    .description('List every operator with its role and state; tokens are never shown')
    .addOption(jsonOption('print one JSON array'))
    .action(async (options) => {
      const operators = await cli.withDatabase((db) => listOperators(db))
      if (options.json) return cli.print(toJson(operators.map(describeOperator)))
      cli.print(
        table([
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
      )
    })

  operators
    .command('revoke')
    .description("Revoke the operator's token: every instance refuses it from its next request on")
    .addArgument(idArgument('<id>', 'operator'))
    .action(async (id) => {
      const record = await cli.withDatabase((db) => revokeOperator(db, cliActor(), id))
      cli.print(`Revoked operator ${record.id} (${record.name})`)
    })
}

import type { Kysely } from 'kysely'
import type { Database, OperatorRole } from '../db/schema.js'
import { ConflictError, InvalidInputError, NotFoundError } from '../errors.js'
import {
  insertOperator,
  listOperators as listOperatorRows,
  markOperatorRevoked,
  OPERATOR_ROLES,
  type IssuedOperator,
  type OperatorRecord
} from '../repositories/operators.js'
import type { Actor } from './rules.js'

// What the CLI and the admin API do with operators: made with a role and a token shown once, listed,
// revoked; an audit event in the transaction of each change, which the database's functions append.

type Db = Kysely<Database>

const UNIQUE_VIOLATION = '23505'
const OPERATOR_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/

/** An operator as the admin API and the CLI's --json show it. */
export function describeOperator(record: OperatorRecord) {
  return {
    id: record.id,
    name: record.name,
    role: record.role,
    prefix: record.prefix,
    createdAt: record.createdAt.toISOString(),
    revokedAt: record.revokedAt?.toISOString() ?? null
  }
}

export async function createOperator(
  db: Db,
  actor: Actor,
  fields: { name: string; role: string }
): Promise<IssuedOperator> {
  if (!OPERATOR_NAME.test(fields.name)) {
    throw new InvalidInputError(
      'An operator name is 1 to 63 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit'
    )
  }
  if (!OPERATOR_ROLES.includes(fields.role as OperatorRole)) {
    throw new InvalidInputError(`role must be one of ${OPERATOR_ROLES.join(', ')}`)
  }
  const role = fields.role as OperatorRole
  return insertOperator(db, actor, { name: fields.name, role }).catch((error: unknown) => {
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error
    throw new ConflictError('operator_exists', `An operator is named '${fields.name}' already`)
  })
}

export async function listOperators(db: Db): Promise<OperatorRecord[]> {
  return listOperatorRows(db)
}

/** Revokes the operator; its token is refused on its next request, on every instance. Again: nothing. */
export async function revokeOperator(db: Db, actor: Actor, id: bigint): Promise<OperatorRecord> {
  const revoked = await markOperatorRevoked(db, actor, id)
  if (!revoked) throw new NotFoundError(`No operator with id ${id}`)
  return revoked
}

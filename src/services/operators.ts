import type { Kysely } from 'kysely'
import type { Database, OperatorRole } from '../db/schema.js'
import { ApiKeyError } from '../repositories/api-keys.js'
import { appendAuditEvent } from '../repositories/audit-events.js'
import {
  insertOperator,
  listOperators as listOperatorRows,
  lockOperator,
  markOperatorRevoked,
  OPERATOR_ROLES,
  type IssuedOperator,
  type OperatorRecord
} from '../repositories/operators.js'
import { changedFields, ConflictError, type Actor } from './rules.js'

// What the CLI and the admin API do with operators: made with a role and a token shown once, listed,
// revoked; an audit event in the transaction of each change.

type Db = Kysely<Database>

/** No operator has this id. */
export class OperatorNotFoundError extends Error {}

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
    throw new ApiKeyError(
      'An operator name is 1 to 63 characters of a-z, 0-9, ".", "_" and "-", starting with a letter or digit'
    )
  }
  if (!OPERATOR_ROLES.includes(fields.role as OperatorRole)) {
    throw new ApiKeyError(`role must be one of ${OPERATOR_ROLES.join(', ')}`)
  }
  const role = fields.role as OperatorRole
  return db.transaction().execute(async (trx) => {
    const issued = await insertOperator(trx, { name: fields.name, role }).catch((error: unknown) => {
      if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error
      throw new ConflictError('operator_exists', `An operator is named '${fields.name}' already`)
    })
    await appendAuditEvent(trx, {
      ...actor,
      action: 'operator.created',
      accountId: null,
      keyId: null,
      changes: changedFields(null, { operator: issued.name, role, prefix: issued.prefix })
    })
    return issued
  })
}

export async function listOperators(db: Db): Promise<OperatorRecord[]> {
  return listOperatorRows(db)
}

/** Revokes the operator; its token is refused on its next request, on every instance. Again: nothing. */
export async function revokeOperator(db: Db, actor: Actor, id: bigint): Promise<OperatorRecord> {
  return db.transaction().execute(async (trx) => {
    const current = await lockOperator(trx, id)
    if (!current) throw new OperatorNotFoundError(`No operator with id ${id}`)
    if (current.revokedAt) return current
    const revoked = (await markOperatorRevoked(trx, id))!
    await appendAuditEvent(trx, {
      ...actor,
      action: 'operator.revoked',
      accountId: null,
      keyId: null,
      changes: {
        operator: { before: current.name, after: current.name },
        revokedAt: { before: null, after: revoked.revokedAt!.toISOString() }
      }
    })
    return revoked
  })
}

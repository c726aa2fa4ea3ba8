import { hash } from 'node:crypto'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, OperatorRole } from '../db/schema.js'
import { randomBase62 } from './api-keys.js'

type Db = Kysely<Database> | Transaction<Database>

export const OPERATOR_ROLES: readonly OperatorRole[] = ['viewer', 'operator', 'admin', 'service']

/** An operator as the admin API shows it: never its token or the token's hash. */
export interface OperatorRecord {
  id: bigint
  name: string
  role: OperatorRole
  prefix: string
  createdAt: Date
  revokedAt: Date | null
}

export interface IssuedOperator extends OperatorRecord {
  /** The whole token: shown once, stored only as its SHA-256 hash. */
  token: string
}

const TOKEN_SHAPE = /^aso_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}$/

/** Whether a bearer token has the shape of an operator's: anything else is looked up nowhere. */
export const isWellFormedOperatorToken = (token: string) => TOKEN_SHAPE.test(token)

/** The token's SHA-256: its 238 random bits make a plain hash enough. */
const hashOperatorToken = (token: string): Buffer => hash('sha256', token, 'buffer')

const columns = ['id', 'name', 'role', 'prefix', 'created_at as createdAt', 'revoked_at as revokedAt'] as const

/** Who makes or revokes an operator: the actor, and the SHA-256 of the admin token it presented. */
export interface OperatorMaker {
  actor: string
  credential?: Buffer | null
  requestId: string | null
  onBehalfOf?: string | null
}

/**
 * Makes an operator with a new token, `aso_<8>_<32>` (238 random bits), returned only here, and its
 * audit event: create_operator (migrations/0029) checks the maker's credential.
 */
export async function insertOperator(
  db: Db,
  maker: OperatorMaker,
  fields: { name: string; role: OperatorRole }
): Promise<IssuedOperator> {
  const prefix = `aso_${randomBase62(8)}`
  const token = `${prefix}_${randomBase62(32)}`
  // A set-returning function of the migration's: the builder cannot call it with named columns.
  const { rows } = await sql<{ id: bigint; createdAt: Date }>`
    SELECT id, created_at AS "createdAt" FROM create_operator(${maker.credential ?? null}::bytea, ${maker.actor},
      ${fields.name}, ${fields.role}, ${prefix}, ${hashOperatorToken(token)}, ${maker.requestId}, ${maker.onBehalfOf ?? null})
  `.execute(db)
  const { id, createdAt } = rows[0]!
  return { id: BigInt(id), name: fields.name, role: fields.role, prefix, createdAt, revokedAt: null, token }
}

/** The unrevoked operator whose token this is, if any: one indexed read. */
export async function findOperatorByToken(db: Db, token: string): Promise<OperatorRecord | undefined> {
  return db
    .selectFrom('operators')
    .select(columns)
    .where('token_hash', '=', hashOperatorToken(token))
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

export async function listOperators(db: Db): Promise<OperatorRecord[]> {
  return db.selectFrom('operators').select(columns).orderBy('id').execute()
}

/**
 * Revokes the operator and appends its event, through revoke_operator (migrations/0029), which checks
 * the maker's credential; one revoked already is left as it is. Undefined when no operator has the id.
 */
export async function markOperatorRevoked(
  db: Db,
  maker: OperatorMaker,
  id: bigint
): Promise<OperatorRecord | undefined> {
  const { rows } = await sql<{ revokedAt: Date }>`
    SELECT revoked_at AS "revokedAt" FROM revoke_operator(${maker.credential ?? null}::bytea, ${maker.actor}, ${id},
      ${maker.requestId}, ${maker.onBehalfOf ?? null})
  `.execute(db)
  if (rows.length === 0) return undefined
  return db.selectFrom('operators').select(columns).where('id', '=', id).executeTakeFirstOrThrow()
}

/**
 * Registers the SHA-256 of each ADMIN_TOKEN, replacing those registered before, so that the database
 * takes the bootstrap admin's credential (migrations/0029). Only the schema's owner may: false, and
 * nothing changed, for a role that may not.
 */
export async function registerAdminCredentials(db: Kysely<Database>, tokens: readonly string[]): Promise<boolean> {
  const { rows } = await sql<{ may: boolean }>`
    SELECT has_table_privilege('admin_credentials', 'INSERT') AND has_table_privilege('admin_credentials', 'DELETE') AS may
  `.execute(db)
  if (!rows[0]?.may) return false
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('admin_credentials').execute()
    await trx
      .insertInto('admin_credentials')
      .values(tokens.map((token) => ({ token_hash: hashOperatorToken(token) })))
      .onConflict((conflict) => conflict.doNothing())
      .execute()
  })
  return true
}

import { hash } from 'node:crypto'
import { sql, type Kysely, type Transaction } from 'kysely'
import type { Database, OperatorRole } from '../db/schema.js'
import { randomBase62 } from './api-keys.js'

type Db = Kysely<Database> | Transaction<Database>

export const OPERATOR_ROLES: readonly OperatorRole[] = ['viewer', 'operator', 'admin']

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

/** Makes an operator with a new token, `aso_<8>_<32>` (238 random bits), returned only here. */
export async function insertOperator(db: Db, fields: { name: string; role: OperatorRole }): Promise<IssuedOperator> {
  const prefix = `aso_${randomBase62(8)}`
  const token = `${prefix}_${randomBase62(32)}`
  const row = await db
    .insertInto('operators')
    .values({ name: fields.name, role: fields.role, prefix, token_hash: hashOperatorToken(token) })
    .returning(columns)
    .executeTakeFirstOrThrow()
  return { ...row, token }
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

export async function lockOperator(db: Db, id: bigint): Promise<OperatorRecord | undefined> {
  return db.selectFrom('operators').select(columns).where('id', '=', id).forUpdate().executeTakeFirst()
}

export async function markOperatorRevoked(db: Db, id: bigint): Promise<OperatorRecord | undefined> {
  return db
    .updateTable('operators')
    .set({ revoked_at: sql<Date>`now()` })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst()
}

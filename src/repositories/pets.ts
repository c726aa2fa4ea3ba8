import { sql } from 'kysely'
import { statement, type Queryable } from '../db/statements.js'
import type { PetStatus } from '../db/schema.js'
import type { NewPet, Pet } from '../schemas/pets.js'

/** A pet as its columns read, before an absent status is left out. */
export interface PetRecord {
  id: bigint
  name: string
  categoryId: bigint
  status: PetStatus | null
}

/** The advisory lock's key: 'pets' in ASCII. */
const PET_ID_LOCK = 0x70657473

const PET_COLUMNS = ['id', 'name', 'category_id as categoryId', 'status'] as const

// A pet without a status has no `status` property at all.
export function toPet(record: PetRecord): Pet {
  if (record.status === null) return { id: record.id, name: record.name, categoryId: record.categoryId }
  return record as Pet
}

export interface PetListQuery {
  limit: number
  status?: PetStatus
  afterId?: bigint
}

// The statements a request runs, compiled once: one per shape of the list.
const LIST = {
  all: statement<{ limit: number }, PetRecord>((db, { limit }) =>
    db.selectFrom('pets').select(PET_COLUMNS).orderBy('id').limit(limit)
  ),
  byStatus: statement<{ status: PetStatus; limit: number }, PetRecord>((db, { status, limit }) =>
    db.selectFrom('pets').select(PET_COLUMNS).where('status', '=', status).orderBy('id').limit(limit)
  ),
  after: statement<{ afterId: bigint; limit: number }, PetRecord>((db, { afterId, limit }) =>
    db.selectFrom('pets').select(PET_COLUMNS).where('id', '>', afterId).orderBy('id').limit(limit)
  ),
  byStatusAfter: statement<{ status: PetStatus; afterId: bigint; limit: number }, PetRecord>(
    (db, { status, afterId, limit }) =>
      db
        .selectFrom('pets')
        .select(PET_COLUMNS)
        .where('status', '=', status)
        .where('id', '>', afterId)
        .orderBy('id')
        .limit(limit)
  )
}
const FIND = statement<{ id: bigint }, PetRecord>((db, { id }) =>
  db.selectFrom('pets').select(PET_COLUMNS).where('id', '=', id)
)
/**
 * Taken by every create before it draws its pet's id, and held until it commits: ids are drawn in
 * the order their creates commit, so a listing that sees a pet sees every pet below it, and a cursor
 * never passes a pet still to come (docs/decisions.md#listing-and-pages).
 */
export const PET_IDS_IN_COMMIT_ORDER = sql`pg_advisory_xact_lock(${sql.lit(PET_ID_LOCK)})`

// The id is the column's default, drawn for the row the select yields once the lock is held.
const INSERT = statement<{ name: string; categoryId: bigint; status: PetStatus | null }, PetRecord>(
  (_db, { name, categoryId, status }) => sql`
    INSERT INTO pets (name, category_id, status)
    SELECT ${name}::text, ${categoryId}::bigint, ${status}::text WHERE ${PET_IDS_IN_COMMIT_ORDER} IS NOT NULL
    RETURNING id, name, category_id AS "categoryId", status`
)

/** One page in ascending id order, and whether more pets follow it. 1 round trip. */
export async function listPets(db: Queryable, query: PetListQuery): Promise<{ pets: Pet[]; hasMore: boolean }> {
  const { status, afterId } = query
  const limit = query.limit + 1
  const rows =
    status === undefined
      ? afterId === undefined
        ? await LIST.all(db, { limit })
        : await LIST.after(db, { afterId, limit })
      : afterId === undefined
        ? await LIST.byStatus(db, { status, limit })
        : await LIST.byStatusAfter(db, { status, afterId, limit })
  const hasMore = rows.length > query.limit
  if (hasMore) rows.pop()
  return { pets: rows.map(toPet), hasMore }
}

/** 1 round trip. */
export async function findPet(db: Queryable, id: bigint): Promise<Pet | undefined> {
  const [row] = await FIND(db, { id })
  return row && toPet(row)
}

/** Adds a pet; committed when this resolves (autocommit). 1 round trip. */
export async function insertPet(db: Queryable, pet: NewPet): Promise<Pet> {
  const [row] = await INSERT(db, { name: pet.name, categoryId: pet.categoryId, status: pet.status ?? null })
  return toPet(row!)
}

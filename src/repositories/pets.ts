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

// Every pet of the call takes its id once the lock is held; the rows come back in the call's order.
const INSERT = statement<{ names: string[]; categoryIds: bigint[]; statuses: (PetStatus | null)[] }, PetRecord>(
  (_db, { names, categoryIds, statuses }) => sql`
    WITH ordered AS (
      SELECT WHERE ${PET_IDS_IN_COMMIT_ORDER} IS NOT NULL
    ), drawn AS (
      SELECT nextval(pg_get_serial_sequence('pets', 'id')) AS id, n.name, n.category_id, n.status, n.position
      FROM ordered, unnest(${names}::text[], ${categoryIds}::bigint[], ${statuses}::text[])
        WITH ORDINALITY AS n(name, category_id, status, position)
    ), inserted AS (
      INSERT INTO pets (id, name, category_id, status) OVERRIDING SYSTEM VALUE
      SELECT id, name, category_id, status FROM drawn
      RETURNING id
    )
    SELECT id, name, category_id AS "categoryId", status FROM drawn JOIN inserted USING (id) ORDER BY position`
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

/** Adds pets, in one statement; committed when this resolves (autocommit). 1 round trip. */
export async function insertPets(db: Queryable, pets: NewPet[]): Promise<Pet[]> {
  const rows = await INSERT(db, {
    names: pets.map((pet) => pet.name),
    categoryIds: pets.map((pet) => pet.categoryId),
    statuses: pets.map((pet) => pet.status ?? null)
  })
  return rows.map(toPet)
}

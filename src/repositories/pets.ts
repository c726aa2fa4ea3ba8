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
const INSERT = statement<{ name: string; categoryId: bigint; status: PetStatus | null }, PetRecord>(
  (db, { name, categoryId, status }) =>
    db.insertInto('pets').values({ name, category_id: categoryId, status }).returning(PET_COLUMNS)
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

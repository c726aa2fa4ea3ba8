import { builder, prepare, runPrepared, type Queryable } from '../db/prepared.js'
import type { PetStatus } from '../db/schema.js'
import type { NewPet, Pet } from '../schemas/pets.js'

/** A pet as its columns read, before an absent status is left out. */
export interface PetRecord {
  id: bigint
  name: string
  categoryId: bigint
  status: PetStatus | null
}

export const PET_COLUMNS = ['id', 'name', 'category_id as categoryId', 'status'] as const

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

// The reads a request makes, prepared once: one statement per shape of the list.
const selectPets = builder.selectFrom('pets').select(PET_COLUMNS)
const LIST = {
  all: prepare<PetRecord>('pets_list', selectPets.orderBy('id').limit(1), ['limit']),
  byStatus: prepare<PetRecord>('pets_list_status', selectPets.where('status', '=', 'sold').orderBy('id').limit(1), [
    'status',
    'limit'
  ]),
  after: prepare<PetRecord>('pets_list_after', selectPets.where('id', '>', 0n).orderBy('id').limit(1), ['afterId', 'limit']),
  byStatusAfter: prepare<PetRecord>(
    'pets_list_status_after',
    selectPets.where('status', '=', 'sold').where('id', '>', 0n).orderBy('id').limit(1),
    ['status', 'afterId', 'limit']
  )
}
const FIND = prepare<PetRecord>('pets_find', selectPets.where('id', '=', 0n), ['id'])

/** One page in ascending id order, and whether more pets follow it. 1 round trip. */
export async function listPets(db: Queryable, query: PetListQuery): Promise<{ pets: Pet[]; hasMore: boolean }> {
  const { status, afterId } = query
  const limit = query.limit + 1
  const rows =
    status === undefined
      ? afterId === undefined
        ? await runPrepared(db, LIST.all, [limit])
        : await runPrepared(db, LIST.after, [afterId, limit])
      : afterId === undefined
        ? await runPrepared(db, LIST.byStatus, [status, limit])
        : await runPrepared(db, LIST.byStatusAfter, [status, afterId, limit])
  const hasMore = rows.length > query.limit
  if (hasMore) rows.pop()
  return { pets: rows.map(toPet), hasMore }
}

/** 1 round trip. */
export async function findPet(db: Queryable, id: bigint): Promise<Pet | undefined> {
  const [row] = await runPrepared(db, FIND, [id])
  return row && toPet(row)
}

const INSERT = prepare<PetRecord>(
  'pets_insert',
  builder.insertInto('pets').values({ name: '', category_id: 0n, status: null }).returning(PET_COLUMNS),
  ['name', 'categoryId', 'status']
)

/** Adds a pet; committed when this resolves (autocommit). 1 round trip. */
export async function insertPet(db: Queryable, pet: NewPet): Promise<Pet> {
  const [row] = await runPrepared(db, INSERT, [pet.name, pet.categoryId, pet.status ?? null])
  return toPet(row!)
}

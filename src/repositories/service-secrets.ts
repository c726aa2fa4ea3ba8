import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'

export async function getServiceSecret(db: Kysely<Database>, name: string): Promise<Buffer> {
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow()
  return row.value
}

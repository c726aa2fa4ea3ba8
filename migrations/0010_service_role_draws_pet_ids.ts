import { sql, type Kysely } from 'kysely'

// Idempotent creation draws a pet's id itself, so that the key row inserted before the pet can name
// it (0008): an explicit nextval needs USAGE on the sequence, which inserting with the default did not.
const SERVICE_ROLE = 'animal_store_app'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`GRANT USAGE ON SEQUENCE pets_id_seq TO ${sql.id(SERVICE_ROLE)}`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`REVOKE USAGE ON SEQUENCE pets_id_seq FROM ${sql.id(SERVICE_ROLE)}`.execute(db)
}

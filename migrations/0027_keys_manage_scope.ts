import { sql, type Kysely } from 'kysely'

/**
 * A third scope, `keys:manage`: a key with it lists, issues, rotates and revokes the keys of its own
 * account. The check on api_keys.scopes (0015) names the scopes a key may carry, so it is made again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check`.execute(db)
  await sql`
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
      CHECK (cardinality(scopes) > 0 AND scopes <@ '{pets:read,pets:write,keys:manage}')
  `.execute(db)
}

/** Fails while a key carries `keys:manage`: taking a scope away from keys is an operator's change, not a migration's. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check`.execute(db)
  await sql`
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
      CHECK (cardinality(scopes) > 0 AND scopes <@ '{pets:read,pets:write}')
  `.execute(db)
}

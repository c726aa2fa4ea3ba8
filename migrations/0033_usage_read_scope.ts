import { sql, type Kysely } from 'kysely'

/**
 * A fourth scope, `usage:read`: a key with it reads its own account's usage (GET /v1/usage). The
 * check on api_keys.scopes (0027) names the scopes a key may carry, so it is made again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check`.execute(db)
  await sql`
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
      CHECK (cardinality(scopes) > 0 AND scopes <@ '{pets:read,pets:write,keys:manage,usage:read}')
  `.execute(db)
}

/** Fails while a key carries `usage:read`: taking a scope away from keys is an operator's change, not a migration's. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_keys DROP CONSTRAINT api_keys_scopes_check`.execute(db)
  await sql`
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_scopes_check
      CHECK (cardinality(scopes) > 0 AND scopes <@ '{pets:read,pets:write,keys:manage}')
  `.execute(db)
}

import { sql, type Kysely } from 'kysely'

/**
 * A fourth operator role, `service`: a token other services present to POST /v1/decisions, which
 * may do nothing else. The check on operators.role (0020) names the roles, so it is made again.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE operators DROP CONSTRAINT operators_role_check`.execute(db)
  await sql`
    ALTER TABLE operators ADD CONSTRAINT operators_role_check
      CHECK (role IN ('viewer', 'operator', 'admin', 'service'))
  `.execute(db)
}

/** Fails while an operator has the role `service`: revoking those is an admin's change, not a migration's. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE operators DROP CONSTRAINT operators_role_check`.execute(db)
  await sql`
    ALTER TABLE operators ADD CONSTRAINT operators_role_check CHECK (role IN ('viewer', 'operator', 'admin'))
  `.execute(db)
}

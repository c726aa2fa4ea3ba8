import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * Named operators of the admin API, each with a role, each token stored only as its SHA-256 hash;
 * and, on each audit event, whom the operator said it acted for (X-Audit-Actor), beside the actor
 * that the service authenticated.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE operators (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,62}$'),
      role text NOT NULL CHECK (role IN ('viewer', 'operator', 'admin')),
      prefix text NOT NULL,
      token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )
  `.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE ON operators TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`ALTER TABLE audit_events ADD COLUMN on_behalf_of text CHECK (length(on_behalf_of) BETWEEN 1 AND 255)`.execute(
    db
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE audit_events DROP COLUMN on_behalf_of`.execute(db)
  await sql`DROP TABLE operators`.execute(db)
}

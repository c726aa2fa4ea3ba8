import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE pets (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
      category_id bigint NOT NULL,
      status text CHECK (status IN ('available', 'pending', 'sold')),
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db)
  // Keyset pagination of a status filter walks (status, id).
  await sql`CREATE INDEX pets_status_id_idx ON pets (status, id)`.execute(db)

  // Secrets the instances of one deployment share, generated once by the database itself.
  await sql`
    CREATE TABLE service_secrets (
      name text PRIMARY KEY,
      value bytea NOT NULL
    )
  `.execute(db)
  await sql`
    INSERT INTO service_secrets (name, value)
    VALUES ('cursor', decode(md5(gen_random_uuid()::text) || md5(gen_random_uuid()::text), 'hex'))
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE service_secrets`.execute(db)
  await sql`DROP TABLE pets`.execute(db)
}

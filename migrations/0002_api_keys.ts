import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE plans (
      name text PRIMARY KEY,
      per_minute integer CHECK (per_minute > 0),
      per_day integer CHECK (per_day > 0),
      -- Enterprise limits are custom: they live on each key.
      CHECK ((name = 'enterprise') = (per_minute IS NULL AND per_day IS NULL))
    )
  `.execute(db)
  await sql`
    INSERT INTO plans (name, per_minute, per_day) VALUES
      ('free', 60, 1000),
      ('pro', 300, 10000),
      ('business', 1000, 100000),
      ('enterprise', NULL, NULL)
  `.execute(db)

  await sql`
    CREATE TABLE api_keys (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      prefix text NOT NULL UNIQUE,
      secret_hash bytea NOT NULL UNIQUE CHECK (octet_length(secret_hash) = 32),
      name text,
      plan text NOT NULL REFERENCES plans (name),
      per_minute integer CHECK (per_minute > 0),
      per_day integer CHECK (per_day > 0),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz,
      CHECK ((plan = 'enterprise') = (per_minute IS NOT NULL AND per_day IS NOT NULL))
    )
  `.execute(db)

  // Instances cache keys in memory and drop them when told: any change to a key or a plan is told.
  await sql`
    CREATE FUNCTION notify_api_keys_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('api_keys_changed', TG_TABLE_NAME);
      RETURN NULL;
    END
    $$
  `.execute(db)
  for (const table of ['api_keys', 'plans']) {
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_changed`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed()
    `.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE api_keys`.execute(db)
  await sql`DROP TABLE plans`.execute(db)
  await sql`DROP FUNCTION notify_api_keys_changed()`.execute(db)
}

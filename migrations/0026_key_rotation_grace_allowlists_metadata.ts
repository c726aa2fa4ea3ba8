import { sql, type Kysely } from 'kysely'

/**
 * A rotated key's previous secret may keep working for a grace period: its hash, its prefix and the
 * instant it stops (on the database's clock, service_now()) stay on the key's row, so that either
 * secret finds the same key, account and windows. A key may be limited to client addresses (CIDR
 * ranges), and keys and accounts carry metadata: a JSON object the operator's systems keep there.
 * The size of the metadata (2 KB as compact JSON) is the services' rule; jsonb prints it otherwise.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE api_keys
      ADD COLUMN previous_prefix text,
      ADD COLUMN previous_secret_hash bytea CHECK (octet_length(previous_secret_hash) = 32),
      ADD COLUMN previous_secret_expires_at timestamptz,
      ADD COLUMN allowed_addresses cidr[] CHECK (cardinality(allowed_addresses) BETWEEN 1 AND 20),
      ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
      ADD CONSTRAINT api_keys_previous_secret_whole CHECK (
        (previous_secret_hash IS NULL) = (previous_prefix IS NULL)
        AND (previous_secret_hash IS NULL) = (previous_secret_expires_at IS NULL)
      )
  `.execute(db)
  // The lookup by secret finds a key by either hash.
  await sql`
    CREATE UNIQUE INDEX api_keys_previous_secret_hash_idx ON api_keys (previous_secret_hash)
    WHERE previous_secret_hash IS NOT NULL
  `.execute(db)
  await sql`
    ALTER TABLE accounts
      ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object')
  `.execute(db)
}

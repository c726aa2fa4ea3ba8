import { sql, type Kysely } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  // A key and its pet now commit in one transaction, so a row always names its pet and no request
  // holds a key by a lease any more. Rows without a pet are claims of the old design: unfinished.
  await sql`DELETE FROM idempotency_keys WHERE pet_id IS NULL`.execute(db)
  await sql`
    ALTER TABLE idempotency_keys
      DROP COLUMN claim_token,
      DROP COLUMN claimed_until,
      DROP COLUMN response_status,
      ALTER COLUMN pet_id SET NOT NULL
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE idempotency_keys
      ALTER COLUMN pet_id DROP NOT NULL,
      ADD COLUMN claim_token uuid NOT NULL DEFAULT gen_random_uuid(),
      ADD COLUMN claimed_until timestamptz NOT NULL DEFAULT 'epoch',
      ADD COLUMN response_status smallint NOT NULL DEFAULT 201
  `.execute(db)
  await sql`
    ALTER TABLE idempotency_keys
      ALTER COLUMN claim_token DROP DEFAULT,
      ALTER COLUMN claimed_until DROP DEFAULT,
      ALTER COLUMN response_status DROP NOT NULL,
      ALTER COLUMN response_status DROP DEFAULT,
      ADD CHECK ((pet_id IS NULL) = (response_status IS NULL))
  `.execute(db)
}

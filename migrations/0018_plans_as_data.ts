import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * Plans become data: each plan has 1 to 5 limits (one per window: second, minute, hour, day or the
 * UTC calendar month), each a fixed window or a token bucket, and a cost per route. An account may
 * replace any of its plan's limits, for good or until an instant, and may hold prepaid credits that
 * run down and refill. The seed's figures move over: free, pro and business keep their minute and
 * day limits; enterprise gets the business figures as a default, and each enterprise account's own
 * limits become its overrides. The old columns stay until the counting statement reads the new
 * tables (0019).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Any plan may now have any limits: the enterprise rule of 0002 and 0015 goes.
  await sql`ALTER TABLE accounts DROP CONSTRAINT accounts_check`.execute(db)
  await sql`
    ALTER TABLE plans
      DROP CONSTRAINT plans_check,
      ADD COLUMN created_at timestamptz NOT NULL DEFAULT now(),
      ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now(),
      ADD CONSTRAINT plans_name_check CHECK (name ~ '^[a-z0-9-]{1,40}$')
  `.execute(db)
  await sql`
    CREATE TABLE plan_limits (
      plan text NOT NULL REFERENCES plans (name) ON UPDATE CASCADE ON DELETE CASCADE,
      "window" text NOT NULL CHECK ("window" IN ('second', 'minute', 'hour', 'day', 'month')),
      algorithm text NOT NULL DEFAULT 'fixed' CHECK (algorithm IN ('fixed', 'bucket')),
      "limit" integer NOT NULL CHECK ("limit" BETWEEN 1 AND 2000000000),
      burst integer CHECK (burst IS NULL OR (burst BETWEEN 1 AND 2000000000 AND algorithm = 'bucket')),
      PRIMARY KEY (plan, "window")
    )
  `.execute(db)
  await sql`
    CREATE TABLE plan_costs (
      plan text NOT NULL REFERENCES plans (name) ON UPDATE CASCADE ON DELETE CASCADE,
      route text NOT NULL CHECK (route ~ '^(GET|POST|PUT|PATCH|DELETE) /'),
      cost integer NOT NULL CHECK (cost BETWEEN 0 AND 1000),
      PRIMARY KEY (plan, route)
    )
  `.execute(db)
  await sql`
    CREATE TABLE account_limit_overrides (
      account_id bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      "window" text NOT NULL CHECK ("window" IN ('second', 'minute', 'hour', 'day', 'month')),
      algorithm text NOT NULL DEFAULT 'fixed' CHECK (algorithm IN ('fixed', 'bucket')),
      "limit" integer NOT NULL CHECK ("limit" BETWEEN 1 AND 2000000000),
      burst integer CHECK (burst IS NULL OR (burst BETWEEN 1 AND 2000000000 AND algorithm = 'bucket')),
      -- null: for good; else the override ends at this instant of the database's clock.
      until timestamptz,
      PRIMARY KEY (account_id, "window")
    )
  `.execute(db)
  await sql`
    CREATE TABLE account_credits (
      account_id bigint PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
      remaining bigint NOT NULL CHECK (remaining >= 0),
      -- At the start of each refill window the credits rise to refill_amount (never fall to it).
      refill_amount bigint CHECK (refill_amount > 0),
      refill_every text CHECK (refill_every IN ('hour', 'day', 'month')),
      refilled_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((refill_amount IS NULL) = (refill_every IS NULL))
    )
  `.execute(db)

  await sql`
    INSERT INTO plan_limits (plan, "window", "limit")
    SELECT name, 'minute', per_minute FROM plans WHERE per_minute IS NOT NULL
    UNION ALL
    SELECT name, 'day', per_day FROM plans WHERE per_day IS NOT NULL
  `.execute(db)
  await sql`
    INSERT INTO plan_limits (plan, "window", "limit")
    SELECT 'enterprise', l."window", l."limit" FROM plan_limits l
    WHERE l.plan = 'business' AND EXISTS (SELECT FROM plans WHERE name = 'enterprise')
  `.execute(db)
  await sql`
    INSERT INTO account_limit_overrides (account_id, "window", "limit")
    SELECT id, 'minute', per_minute FROM accounts WHERE per_minute IS NOT NULL
    UNION ALL
    SELECT id, 'day', per_day FROM accounts WHERE per_day IS NOT NULL
  `.execute(db)

  // Instances cache what a key may do: a change to a plan's limits, costs or an account's overrides
  // is announced as a key change is (0002).
  for (const table of ['plan_limits', 'plan_costs', 'account_limit_overrides']) {
    await sql`
      CREATE TRIGGER ${sql.raw(`${table}_changed`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_api_keys_changed()
    `.execute(db)
  }

  await sql`GRANT SELECT, INSERT, UPDATE ON plans TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  for (const table of ['plan_limits', 'plan_costs', 'account_limit_overrides', 'account_credits']) {
    await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON ${sql.table(table)} TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['account_credits', 'account_limit_overrides', 'plan_costs', 'plan_limits']) {
    await sql`DROP TABLE ${sql.table(table)}`.execute(db)
  }
  await sql`
    ALTER TABLE plans DROP CONSTRAINT plans_name_check, DROP COLUMN created_at, DROP COLUMN updated_at
  `.execute(db)
}

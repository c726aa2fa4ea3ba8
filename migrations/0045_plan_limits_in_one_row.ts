import { sql, type Kysely } from 'kysely'
import { createCountUnitsPerAccount } from './0040_count_units_decided_per_account.js'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

// The rows of plan_windows of the plans that `where` keeps, from plan_limits: the order count_units
// takes them in, enforced ones first, each shortest first.
const PLAN_ROWS = (where = '') => `SELECT l.plan, array_agg(l."window" ORDER BY l.shadow, window_seconds(l."window")),
          array_agg(l.algorithm ORDER BY l.shadow, window_seconds(l."window")),
          array_agg(l."limit" ORDER BY l.shadow, window_seconds(l."window")),
          array_agg(coalesce(l.burst, l."limit") ORDER BY l.shadow, window_seconds(l."window")),
          array_agg(l.shadow ORDER BY l.shadow, window_seconds(l."window")),
          array_agg(l.anchor = 'account' ORDER BY l.shadow, window_seconds(l."window")),
          bool_or(l.anchor = 'account')
        FROM public.plan_limits l${where}
        GROUP BY l.plan`

/**
 * The limits of each plan in one row, kept by a trigger on plan_limits: count_units reads an account's
 * plan's row where it joined, sorted and aggregated the plan's limits on every call, and, for an
 * account with an override in force, account_windows as before through account_window_arrays. It
 * answers as before. count_units keeps its arguments, result and oid, and account_windows stays: the
 * release before calls both.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE plan_windows (
      plan text PRIMARY KEY,
      windows text[] NOT NULL,
      algorithms text[] NOT NULL,
      limits integer[] NOT NULL,
      capacities integer[] NOT NULL,
      shadows boolean[] NOT NULL,
      -- Each limit's month follows the account's cycle_anchor; anchored: any does.
      account_months boolean[] NOT NULL,
      anchored boolean NOT NULL
    )
  `.execute(db)
  // A definer's function, so that the service's role, which writes plan_limits, reads plan_windows only.
  await sql`
    CREATE FUNCTION plan_windows_kept() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path TO 'pg_catalog', 'public'
    AS $$
      DECLARE
        before text;
        after text;
      BEGIN
        IF TG_OP = 'TRUNCATE' THEN
          DELETE FROM public.plan_windows;
          RETURN NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN before := OLD.plan; END IF;
        IF TG_OP <> 'DELETE' THEN after := NEW.plan; END IF;
        -- Two writers of one plan take turns, the second reading the first's rows once it commits.
        PERFORM FROM public.plans p WHERE p.name IN (before, after) ORDER BY p.name FOR NO KEY UPDATE;
        DELETE FROM public.plan_windows w WHERE w.plan IN (before, after)
          AND NOT EXISTS (SELECT FROM public.plan_limits l WHERE l.plan = w.plan);
        INSERT INTO public.plan_windows AS w (plan, windows, algorithms, limits, capacities, shadows,
          account_months, anchored)
        ${sql.raw(PLAN_ROWS(' WHERE l.plan IN (before, after)'))}
        ON CONFLICT (plan) DO UPDATE SET (windows, algorithms, limits, capacities, shadows, account_months,
          anchored) = (excluded.windows, excluded.algorithms, excluded.limits, excluded.capacities,
          excluded.shadows, excluded.account_months, excluded.anchored);
        RETURN NULL;
      END
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION plan_windows_kept() FROM PUBLIC`.execute(db)
  // A plan renamed or deleted changes its rows of plan_limits by their foreign key's cascade.
  await sql`
    CREATE TRIGGER plan_windows_kept AFTER INSERT OR UPDATE OR DELETE ON plan_limits
    FOR EACH ROW EXECUTE FUNCTION plan_windows_kept()
  `.execute(db)
  await sql`
    CREATE TRIGGER plan_windows_emptied AFTER TRUNCATE ON plan_limits
    FOR EACH STATEMENT EXECUTE FUNCTION plan_windows_kept()
  `.execute(db)
  // After the triggers: plan_limits is held against writes until this commits.
  await sql`INSERT INTO plan_windows ${sql.raw(PLAN_ROWS())}`.execute(db)
  await sql`GRANT SELECT ON plan_windows TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  // A function, not a join of the statement's: the statement starts none of its nodes on a call
  // that counts no account with an override.
  await sql`
    CREATE FUNCTION account_window_arrays(account bigint, at timestamptz, OUT windows text[], OUT algorithms text[],
      OUT limits integer[], OUT capacities integer[], OUT shadows boolean[], OUT anchors timestamptz[])
    LANGUAGE plpgsql STABLE
    AS $$
      BEGIN
        SELECT array_agg(l."window"), array_agg(l.algorithm), array_agg(l."limit"), array_agg(l.capacity),
          array_agg(l.shadow), array_agg(l.anchor)
        INTO windows, algorithms, limits, capacities, shadows, anchors
        FROM (
          SELECT * FROM account_windows(account, at) AS l ORDER BY l.shadow, window_seconds(l."window")
        ) AS l;
      END
    $$
  `.execute(db)
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored', 'one row')
}

export async function down(db: Kysely<any>): Promise<void> {
  await createCountUnitsPerAccount(db, 'once locked', 'with shadows', 'anchored')
  await sql`DROP FUNCTION account_window_arrays(bigint, timestamptz)`.execute(db)
  await sql`DROP TRIGGER plan_windows_emptied ON plan_limits`.execute(db)
  await sql`DROP TRIGGER plan_windows_kept ON plan_limits`.execute(db)
  await sql`DROP FUNCTION plan_windows_kept()`.execute(db)
  await sql`DROP TABLE plan_windows`.execute(db)
}

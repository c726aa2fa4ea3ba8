import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * hand_back_units gives leased units an instance will not use back to their accounts without a
 * request to count: those of an account that stopped sending to it, and all of them when it shuts
 * down. Each (account, units, instant they were counted at) is taken off the account's fixed windows
 * as count_units takes a request's `returned` off them: a window counts them back only if count_units
 * would go on counting in it (its stored start is its current start, on the limits in force) and it
 * started at or before that instant, never below 0. A window that ended, or that the limits no
 * longer hold, stays as it is: count_units starts it afresh. It locks the accounts' counters alone,
 * in account order, as count_units takes them first. A new function only: the release before calls
 * none of it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION hand_back_units(account_ids bigint[], units integer[], counted_ats double precision[])
    RETURNS void
    LANGUAGE plpgsql
    SET "TimeZone" TO 'UTC'
    AS $$
      DECLARE
        v_accounts bigint[];
        v_now timestamptz;
      BEGIN
        -- Committed as a count is, without waiting for the flush or the standby: a crash may lose the
        -- hand-back, which leaves the units counted, as they were before it.
        PERFORM set_config('synchronous_commit', 'off', true);
        SELECT array_agg(DISTINCT r.account_id ORDER BY r.account_id) INTO v_accounts
        FROM unnest(hand_back_units.account_ids, hand_back_units.units) AS r(account_id, units)
        WHERE r.units > 0;
        -- An account without a row has nothing counted: none is made.
        PERFORM FROM account_counters k WHERE k.account_id = ANY (v_accounts) ORDER BY k.account_id FOR UPDATE;
        v_now := service_now();

        UPDATE account_counters k SET used = h.used
        FROM (
          SELECT c.account_id, array_agg(CASE
              WHEN s.algorithm = 'fixed' AND s.started_at = l.started_at THEN greatest(0, s.used - coalesce(r.units, 0))
              ELSE s.used END ORDER BY s.n) AS used
          FROM account_counters c
          CROSS JOIN LATERAL unnest(c.windows, c.algorithms, c.started_ats, c.used)
            WITH ORDINALITY AS s("window", algorithm, started_at, used, n)
          -- The start of the window count_units would count in under this stored name, as decide_account
          -- reckons it: a fixed limit in force, a shadow's stored as "<window>:shadow".
          LEFT JOIN LATERAL (
            SELECT CASE WHEN a.anchor IS NULL THEN window_start(a."window", v_now)
              ELSE anchored_month_start(a.anchor, v_now) END AS started_at
            FROM account_windows(c.account_id, v_now) AS a
            WHERE a.algorithm = 'fixed' AND a."window" || CASE WHEN a.shadow THEN ':shadow' ELSE '' END = s."window"
          ) AS l ON true
          CROSS JOIN LATERAL (
            SELECT sum(g.units) AS units
            FROM unnest(hand_back_units.account_ids, hand_back_units.units, hand_back_units.counted_ats)
              AS g(account_id, units, counted_at)
            WHERE g.account_id = c.account_id AND g.units > 0 AND g.counted_at >= epoch_ms(s.started_at)
          ) AS r
          WHERE c.account_id = ANY (v_accounts)
          GROUP BY c.account_id
        ) AS h
        WHERE k.account_id = h.account_id AND k.used IS DISTINCT FROM h.used;
      END
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION hand_back_units(bigint[], integer[], double precision[]) FROM PUBLIC`.execute(db)
  await sql`
    GRANT EXECUTE ON FUNCTION hand_back_units(bigint[], integer[], double precision[]) TO ${sql.id(SERVICE_ROLE)}
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION hand_back_units(bigint[], integer[], double precision[])`.execute(db)
}

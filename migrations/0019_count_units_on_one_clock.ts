import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * One clock for every limit: the database's. count_units replaces count_requests (0016, 0017). It
 * takes no instant from the caller: windows, buckets, refusal streaks, bans, credits' refills and the
 * hour of usage are all decided on service_now(). It reads each account's limits in force (its plan's,
 * replaced by its overrides until they end) and the route's cost from the caller, counts the units
 * against every limit and the account's credits, records refusals, bans and usage, and appends the
 * key.banned and usage.threshold events to the outbox in the same transaction. Each account's
 * counters are rows of limit_counters, one per window, locked in window order, accounts in id order,
 * so concurrent statements from any instance queue on them and never over-admit.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // Empty in service. A test or a drill may fix the database's clock at one instant by inserting it.
  await sql`
    CREATE TABLE service_clock (
      at timestamptz NOT NULL,
      one boolean PRIMARY KEY DEFAULT true CHECK (one)
    )
  `.execute(db)
  await sql`
    CREATE FUNCTION service_now() RETURNS timestamptz LANGUAGE sql VOLATILE AS $$
      SELECT coalesce((SELECT at FROM service_clock), clock_timestamp())
    $$
  `.execute(db)
  // A window's length for a bucket's refill rate: a month's bucket refills over 30 days.
  await sql`
    CREATE FUNCTION window_seconds("window" text) RETURNS double precision LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE "window" WHEN 'second' THEN 1 WHEN 'minute' THEN 60 WHEN 'hour' THEN 3600
        WHEN 'day' THEN 86400 ELSE 2592000 END::double precision
    $$
  `.execute(db)
  await createWindowFunctions(db)
  // An account's limits in force at an instant, one per window: its overrides that have not ended,
  // then its plan's.
  await sql`
    CREATE FUNCTION account_limits(account bigint, at timestamptz)
    RETURNS TABLE ("window" text, algorithm text, "limit" integer, capacity integer)
    LANGUAGE sql STABLE AS $$
      SELECT DISTINCT ON (l."window") l."window", l.algorithm, l."limit", coalesce(l.burst, l."limit")
      FROM (
        SELECT o."window", o.algorithm, o."limit", o.burst, 0 AS rank FROM account_limit_overrides o
        WHERE o.account_id = account AND (o.until IS NULL OR o.until > at)
        UNION ALL
        SELECT p."window", p.algorithm, p."limit", p.burst, 1 FROM plan_limits p
        JOIN accounts a ON a.plan = p.plan WHERE a.id = account
      ) AS l
      ORDER BY l."window", l.rank
    $$
  `.execute(db)

  await sql`
    CREATE TABLE limit_counters (
      account_id bigint NOT NULL,
      "window" text NOT NULL,
      algorithm text NOT NULL,
      -- fixed: the window's start; bucket: the instant its level was measured.
      started_at timestamptz NOT NULL,
      -- fixed: units counted in the window, leases included.
      used bigint NOT NULL DEFAULT 0,
      -- bucket: units it held at started_at.
      level double precision NOT NULL DEFAULT 0,
      -- fixed: the highest usage.threshold percentage announced in this window (0, 80 or 100).
      notified smallint NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, "window")
    )
  `.execute(db)

  await sql`
    DROP FUNCTION count_requests(text[], bigint[], bigint[], bigint[], bigint[], integer[], integer[], integer[],
      integer[], integer[], integer[], bigint[], bigint[], integer[], integer[])
  `.execute(db)
  await sql`DROP TABLE rate_limit_counters`.execute(db)
  await sql`ALTER TABLE plans DROP COLUMN per_minute, DROP COLUMN per_day`.execute(db)
  await sql`ALTER TABLE accounts DROP COLUMN per_minute, DROP COLUMN per_day`.execute(db)

  await createCountUnits(db)

  await sql`GRANT SELECT ON service_clock TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON limit_counters TO ${sql.id(SERVICE_ROLE)}`.execute(db)
}

/** epoch_ms, window_start and window_end as this migration made them (0028 makes them again, inlinable). */
export async function createWindowFunctions(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION epoch_ms(at timestamptz) RETURNS double precision LANGUAGE sql IMMUTABLE AS $$
      SELECT (extract(epoch FROM at) * 1000)::double precision
    $$
  `.execute(db)
  // The UTC window (calendar month included) that holds an instant, as its start and its end.
  await sql`
    CREATE FUNCTION window_start("window" text, at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
      SELECT date_trunc("window", at, 'UTC')
    $$
  `.execute(db)
  await sql`
    CREATE FUNCTION window_end("window" text, at timestamptz) RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
      SELECT (date_trunc("window", at, 'UTC') AT TIME ZONE 'UTC' + ('1 ' || "window")::interval) AT TIME ZONE 'UTC'
    $$
  `.execute(db)
}

/** count_units as this migration made it (0028 replaces it). */
export async function createCountUnits(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION count_units(
      api_key_ids bigint[], account_ids bigint[], costs integer[], wants integer[],
      returned integer[], returned_ats double precision[], ban_afters integer[], ban_seconds integer[],
      usage_key_ids bigint[], usage_hours double precision[], usage_admitted integer[], usage_refused integer[],
      usage_units bigint[]
    ) RETURNS TABLE (
      "apiKeyId" bigint, admitted boolean, granted integer, "now" double precision, "leaseUntil" double precision,
      reason text, "retryAt" double precision, "bannedUntil" double precision, "newlyBanned" boolean,
      "windows" text[], algorithms text[], limits integer[], remaining bigint[], resets double precision[],
      credits bigint
    ) LANGUAGE plpgsql SET "TimeZone" = 'UTC' AS $function$
    DECLARE
      v_now timestamptz := service_now();
      r record;
      l record;
      c record;
      credit record;
      v_banned_until timestamptz;
      v_newly boolean;
      v_available bigint;
      v_granted integer;
      v_admitted boolean;
      v_reason text;
      v_retry timestamptz;
      v_lease timestamptz;
      v_leasable boolean;
      v_streak integer;
      v_usage_keys bigint[] := '{}';
      v_usage_admitted integer[] := '{}';
      v_usage_refused integer[] := '{}';
      v_usage_units bigint[] := '{}';
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      FOR r IN
        SELECT i.* FROM unnest(api_key_ids, account_ids, costs, wants, returned, returned_ats, ban_afters, ban_seconds)
          AS i(key_id, account_id, cost, want, returned, returned_at, ban_after, ban_seconds)
        ORDER BY i.account_id, i.key_id
      LOOP
        -- The account's counters, one per limit in force, made if missing and locked in window order;
        -- then the key's ban, then the account's credits: every statement takes its locks in this order.
        INSERT INTO limit_counters AS k (account_id, "window", algorithm, started_at, used, level)
        SELECT r.account_id, a."window", a.algorithm, v_now, 0, a.capacity
        FROM account_limits(r.account_id, v_now) a ORDER BY a."window"
        ON CONFLICT DO NOTHING;
        PERFORM 1 FROM limit_counters k WHERE k.account_id = r.account_id ORDER BY k."window" FOR UPDATE;

        SELECT b.banned_until INTO v_banned_until FROM api_key_bans b WHERE b.api_key_id = r.key_id FOR UPDATE;
        IF v_banned_until <= v_now THEN v_banned_until := NULL; END IF;
        v_newly := false;
        -- Each counter brought to now: a fixed window that ended starts again at 0 (units leased in
        -- it and handed back are taken off first); a bucket refills for the time since it was measured.
        UPDATE limit_counters k SET
          algorithm = a.algorithm,
          started_at = CASE WHEN a.algorithm = 'fixed' THEN window_start(a."window", v_now) ELSE v_now END,
          used = CASE
            WHEN a.algorithm = 'fixed' AND k.algorithm = 'fixed' AND k.started_at = window_start(a."window", v_now)
              THEN greatest(0, k.used - CASE
                WHEN r.returned_at >= extract(epoch FROM k.started_at) * 1000 THEN r.returned ELSE 0 END)
            ELSE 0 END,
          level = CASE
            WHEN a.algorithm = 'bucket' AND k.algorithm = 'bucket' THEN least(a.capacity::double precision,
              k.level + greatest(0, extract(epoch FROM v_now - k.started_at)) * a."limit" / window_seconds(a."window"))
            WHEN a.algorithm = 'bucket' THEN a.capacity
            ELSE 0 END,
          notified = CASE
            WHEN a.algorithm = 'fixed' AND k.algorithm = 'fixed' AND k.started_at = window_start(a."window", v_now)
              THEN k.notified
            ELSE 0 END
        FROM account_limits(r.account_id, v_now) a
        WHERE k.account_id = r.account_id AND k."window" = a."window";

        -- Credits: raised to the refill amount once per refill window, and given back what a lease did not use.
        SELECT * INTO credit FROM account_credits ac WHERE ac.account_id = r.account_id FOR UPDATE;
        IF FOUND THEN
          UPDATE account_credits ac SET
            remaining = CASE
              WHEN ac.refill_every IS NOT NULL AND window_start(ac.refill_every, v_now) > ac.refilled_at
                THEN greatest(ac.remaining + r.returned, ac.refill_amount)
              ELSE ac.remaining + r.returned END,
            refilled_at = CASE
              WHEN ac.refill_every IS NOT NULL AND window_start(ac.refill_every, v_now) > ac.refilled_at
                THEN window_start(ac.refill_every, v_now)
              ELSE ac.refilled_at END,
            updated_at = v_now
          WHERE ac.account_id = r.account_id
          RETURNING * INTO credit;
        END IF;

        SELECT min(CASE WHEN k.algorithm = 'fixed' THEN a."limit" - k.used ELSE floor(k.level)::bigint END)
        INTO v_available
        FROM limit_counters k JOIN account_limits(r.account_id, v_now) a ON a."window" = k."window"
        WHERE k.account_id = r.account_id;

        v_reason := NULL;
        v_retry := NULL;
        IF v_banned_until IS NOT NULL THEN
          v_admitted := false;
          v_reason := 'key_banned';
          v_retry := v_banned_until;
        ELSIF r.cost = 0 THEN
          v_admitted := true;
        ELSIF coalesce(v_available, r.want) >= r.cost AND (credit IS NULL OR credit.remaining >= r.cost) THEN
          v_admitted := true;
        ELSE
          v_admitted := false;
          IF coalesce(v_available, r.cost) >= r.cost THEN
            -- Only the credits are short: a retry succeeds at their next refill, if they have one.
            v_reason := 'credits_exhausted';
            IF credit.refill_every IS NOT NULL THEN v_retry := window_end(credit.refill_every, v_now); END IF;
          ELSE
            v_reason := 'rate_limited';
            -- No retry succeeds before every limit short of the cost has room for it again.
            SELECT max(CASE
              WHEN k.algorithm = 'fixed' THEN window_end(a."window", v_now)
              ELSE v_now + make_interval(secs => (least(r.cost, a.capacity) - k.level) * window_seconds(a."window")
                / a."limit")
              END)
            INTO v_retry
            FROM limit_counters k JOIN account_limits(r.account_id, v_now) a ON a."window" = k."window"
            WHERE k.account_id = r.account_id
              AND (CASE WHEN k.algorithm = 'fixed' THEN a."limit" - k.used ELSE floor(k.level) END) < r.cost;
          END IF;
        END IF;

        -- A lease only beside fixed windows alone: a bucket or credits are counted request by request.
        SELECT NOT coalesce(bool_or(k.algorithm = 'bucket'), false) AND credit.account_id IS NULL INTO v_leasable
        FROM limit_counters k WHERE k.account_id = r.account_id;

        v_granted := 0;
        IF v_admitted AND r.cost > 0 THEN
          v_granted := least(CASE WHEN v_leasable THEN greatest(r.want, r.cost) ELSE r.cost END,
            coalesce(v_available, r.want), coalesce(credit.remaining, r.want));
          UPDATE limit_counters k SET
            used = k.used + CASE WHEN k.algorithm = 'fixed' THEN v_granted ELSE 0 END,
            level = k.level - CASE WHEN k.algorithm = 'bucket' THEN v_granted ELSE 0 END
          WHERE k.account_id = r.account_id;
          UPDATE account_credits ac SET remaining = ac.remaining - v_granted WHERE ac.account_id = r.account_id;
          -- usage.threshold: each fixed window of an hour or longer passing 80 % and 100 %, once per window.
          FOR c IN
            SELECT k."window", a."limit", k.used, k.notified, t.percent
            FROM limit_counters k
            JOIN account_limits(r.account_id, v_now) a ON a."window" = k."window"
            CROSS JOIN (VALUES (80), (100)) AS t(percent)
            WHERE k.account_id = r.account_id AND k.algorithm = 'fixed' AND k."window" IN ('hour', 'day', 'month')
              AND k.notified < t.percent AND k.used * 100 >= a."limit"::bigint * t.percent
            ORDER BY k."window", t.percent
          LOOP
            INSERT INTO webhook_events (type, at, account_id, data) VALUES ('usage.threshold', v_now, r.account_id,
              jsonb_build_object(
                'account', jsonb_build_object('id', r.account_id::text),
                'window', c."window", 'limit', c."limit", 'used', c.used, 'percent', c.percent,
                'windowStart', to_char(window_start(c."window", v_now), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                'windowEnd', to_char(window_end(c."window", v_now), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')));
            UPDATE limit_counters k SET notified = c.percent
            WHERE k.account_id = r.account_id AND k."window" = c."window";
          END LOOP;
        END IF;

        -- A refusal adds to its key's streak, which lasts as long as the window that refuses; more than
        -- ban_after refusals after the first 429 ban the key.
        IF NOT v_admitted AND v_banned_until IS NULL AND r.ban_after IS NOT NULL THEN
          INSERT INTO api_key_bans AS b (api_key_id, refused, refused_until, banned_until, ban_after, ban_seconds,
            updated_at)
          VALUES (r.key_id, 1, v_retry, NULL, r.ban_after, r.ban_seconds, v_now)
          ON CONFLICT (api_key_id) DO UPDATE SET
            refused = CASE WHEN b.refused_until > v_now THEN b.refused ELSE 0 END + 1,
            refused_until = CASE WHEN b.refused_until > v_now THEN b.refused_until ELSE excluded.refused_until END,
            ban_after = excluded.ban_after, ban_seconds = excluded.ban_seconds, updated_at = v_now
          RETURNING b.refused INTO v_streak;
          IF v_streak > r.ban_after + 1 THEN
            v_banned_until := v_now + make_interval(secs => r.ban_seconds);
            v_newly := true;
            v_reason := 'key_banned';
            v_retry := v_banned_until;
            UPDATE api_key_bans b SET banned_until = v_banned_until, refused = 0, refused_until = NULL
            WHERE b.api_key_id = r.key_id;
            INSERT INTO webhook_events (type, at, account_id, data) VALUES ('key.banned', v_now, r.account_id,
              jsonb_build_object(
                'key', jsonb_build_object('id', r.key_id::text, 'accountId', r.account_id::text),
                'bannedUntil', to_char(v_banned_until, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
            -- Instances that hold a lease of the account refuse the key from now on, not when they next count.
            PERFORM pg_notify('api_key_banned', r.key_id || ':' || (extract(epoch FROM v_banned_until) * 1000)::bigint);
          END IF;
        END IF;

        v_usage_keys := v_usage_keys || r.key_id;
        v_usage_admitted := v_usage_admitted || v_admitted::integer;
        v_usage_refused := v_usage_refused || (NOT v_admitted)::integer;
        v_usage_units := v_usage_units || CASE WHEN v_admitted THEN r.cost ELSE 0 END::bigint;

        -- A lease lives until the shortest fixed window ends, and at most a second.
        SELECT CASE WHEN NOT v_leasable THEN v_now
          ELSE least(v_now + interval '1 second', min(window_end(k."window", v_now))) END
        INTO v_lease
        FROM limit_counters k JOIN account_limits(r.account_id, v_now) a ON a."window" = k."window"
        WHERE k.account_id = r.account_id;

        RETURN QUERY
        SELECT r.key_id, v_admitted, v_granted, epoch_ms(v_now), epoch_ms(coalesce(v_lease, v_now)), v_reason,
          epoch_ms(v_retry), epoch_ms(v_banned_until), v_newly,
          array_agg(k."window" ORDER BY window_seconds(k."window")),
          array_agg(k.algorithm ORDER BY window_seconds(k."window")),
          array_agg(CASE WHEN k.algorithm = 'fixed' THEN a."limit" ELSE a.capacity END
            ORDER BY window_seconds(k."window")),
          array_agg(CASE WHEN k.algorithm = 'fixed' THEN greatest(0, a."limit" - k.used)
            ELSE floor(k.level)::bigint END ORDER BY window_seconds(k."window")),
          array_agg(epoch_ms(CASE WHEN k.algorithm = 'fixed' THEN window_end(k."window", v_now)
            ELSE v_now + make_interval(secs => (a.capacity - k.level) * window_seconds(k."window") / a."limit")
            END) ORDER BY window_seconds(k."window")),
          (SELECT ac.remaining FROM account_credits ac WHERE ac.account_id = r.account_id)
        FROM limit_counters k JOIN account_limits(r.account_id, v_now) a ON a."window" = k."window"
        WHERE k.account_id = r.account_id;
      END LOOP;

      -- Usage per key and hour: this statement's requests, and those decided from leases and reported.
      INSERT INTO api_key_usage AS u (api_key_id, hour, admitted, refused, units)
      SELECT x.key_id, x.hour, sum(x.admitted), sum(x.refused), sum(x.units)
      FROM (
        SELECT s.key_id, date_trunc('hour', v_now, 'UTC') AS hour, s.admitted, s.refused, s.units
        FROM unnest(v_usage_keys, v_usage_admitted, v_usage_refused, v_usage_units)
          AS s(key_id, admitted, refused, units)
        UNION ALL
        SELECT p.key_id, date_trunc('hour', timestamptz 'epoch' + p.hour_ms * interval '1 millisecond', 'UTC'),
          p.admitted, p.refused, p.units
        FROM unnest(usage_key_ids, usage_hours, usage_admitted, usage_refused, usage_units)
          AS p(key_id, hour_ms, admitted, refused, units)
      ) AS x
      GROUP BY x.key_id, x.hour
      ORDER BY x.key_id, x.hour
      ON CONFLICT (api_key_id, hour) DO UPDATE SET
        admitted = u.admitted + excluded.admitted,
        refused = u.refused + excluded.refused,
        units = u.units + excluded.units;
    END
    $function$
  `.execute(db)
}

export async function down(): Promise<void> {
  throw new Error('0019 cannot be undone: the per-window counters have no place in the earlier schema')
}

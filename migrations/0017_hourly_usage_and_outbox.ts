import { sql, type Kysely } from 'kysely'
import { up as countPerAccount } from './0016_count_requests_per_account.js'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * Usage per key and UTC hour rather than day, with the units the admitted requests spent, so that
 * billing can sum any range and an hour shows what was admitted in it; a day is the sum of its
 * hours. Each day's row becomes the row of its first hour. And the outbox's events: one row per
 * event, appended in the transaction of the change it reports, delivered to webhook endpoints
 * later. count_requests keeps its arguments; the usage it is told of is now per hour (a report's
 * instant is truncated to its hour, so an instance of the previous release, reporting day starts,
 * still counts, in the day's first hour).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE api_key_usage ADD COLUMN hour timestamptz, ADD COLUMN units bigint NOT NULL DEFAULT 0 CHECK (units >= 0)`.execute(
    db
  )
  await sql`UPDATE api_key_usage SET hour = day::timestamp AT TIME ZONE 'UTC', units = admitted`.execute(db)
  await sql`ALTER TABLE api_key_usage DROP CONSTRAINT api_key_usage_pkey, DROP COLUMN day`.execute(db)
  await sql`ALTER TABLE api_key_usage ALTER COLUMN hour SET NOT NULL, ADD PRIMARY KEY (api_key_id, hour)`.execute(db)
  // The export reads a range of hours across keys; clean-up deletes hours past their retention.
  await sql`CREATE INDEX api_key_usage_hour_idx ON api_key_usage (hour, api_key_id)`.execute(db)

  await sql`
    CREATE TABLE webhook_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      type text NOT NULL,
      at timestamptz NOT NULL DEFAULT clock_timestamp(),
      account_id bigint,
      data jsonb NOT NULL
    )
  `.execute(db)
  await sql`GRANT SELECT, INSERT ON webhook_events TO ${sql.id(SERVICE_ROLE)}`.execute(db)

  // Dropped and made again in this migration's transaction: an argument's name cannot be replaced.
  await sql`
    DROP FUNCTION count_requests(text[], bigint[], bigint[], bigint[], bigint[], integer[], integer[], integer[],
      integer[], integer[], integer[], bigint[], bigint[], integer[], integer[])
  `.execute(db)
  await sql`
    CREATE FUNCTION count_requests(
      subjects text[], api_key_ids bigint[], minute_starts bigint[], day_starts bigint[],
      request_times bigint[], wants integer[], returns integer[], per_minutes integer[], per_days integer[],
      ban_afters integer[], ban_seconds integer[],
      usage_key_ids bigint[], usage_hours bigint[], usage_admitted integer[], usage_refused integer[]
    ) RETURNS TABLE (
      subject text, granted integer, "minuteStart" double precision, "minuteUsed" integer,
      "dayStart" double precision, "dayUsed" integer, "bannedUntil" double precision, "newlyBanned" boolean
    ) LANGUAGE plpgsql AS $function$
    #variable_conflict use_column
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      RETURN QUERY
      WITH given AS (
        SELECT i.subject, i.api_key_id,
          timestamptz 'epoch' + i.minute_ms * interval '1 millisecond' AS minute_start,
          timestamptz 'epoch' + i.day_ms * interval '1 millisecond' AS day_start,
          timestamptz 'epoch' + i.now_ms * interval '1 millisecond' AS now,
          i.want, i.returned, i.per_minute, i.per_day, i.ban_after, i.ban_seconds
        FROM unnest(subjects, api_key_ids, minute_starts, day_starts, request_times, wants, returns,
          per_minutes, per_days, ban_afters, ban_seconds)
          AS i(subject, api_key_id, minute_ms, day_ms, now_ms, want, returned, per_minute, per_day, ban_after,
            ban_seconds)
      ), input AS (
        -- A key's ban as it stood when the statement began; the window row itself never bans a key.
        SELECT g.subject, g.api_key_id, g.minute_start, g.day_start, g.now, g.returned, g.per_minute, g.per_day,
          g.ban_seconds, g.ban_after AS key_ban_after,
          b.banned_until AS key_banned_until,
          g.api_key_id IS NOT NULL AND coalesce(b.banned_until > g.now, false) AS key_banned,
          CASE WHEN g.api_key_id IS NOT NULL AND coalesce(b.banned_until > g.now, false) THEN 0 ELSE g.want END AS want,
          CASE WHEN g.api_key_id IS NULL THEN g.ban_after END AS ban_after
        FROM given g LEFT JOIN api_key_bans b ON b.api_key_id = g.api_key_id
      ), counted AS (
        INSERT INTO rate_limit_counters AS c (
          subject, minute_start, minute_used, minute_limit, day_start, day_used, day_limit,
          wanted, last_grant, ban_after, ban_seconds, updated_at, returned
        )
        SELECT i.subject, i.minute_start, i.first_grant, i.per_minute, i.day_start, i.first_grant, i.per_day,
          i.want, i.first_grant, i.ban_after, i.ban_seconds, i.now, i.returned
        FROM (SELECT *, LEAST(want, per_minute, COALESCE(per_day, want)) AS first_grant FROM input) AS i
        ORDER BY i.subject
        ON CONFLICT (subject) DO UPDATE SET (
          minute_start, day_start, minute_used, day_used, last_grant, minute_limit, day_limit, wanted, returned,
          ban_after, ban_seconds, refused, refused_until, banned_until, updated_at
        ) = (
          SELECT w.minute_start, w.day_start, w.minute_used + g.granted, w.day_used + g.granted, g.granted,
            excluded.minute_limit, excluded.day_limit, excluded.wanted, excluded.returned,
            excluded.ban_after, excluded.ban_seconds,
            CASE WHEN b.bans THEN 0 WHEN g.refusing THEN w.streak + 1 WHEN w.banned THEN c.refused ELSE 0 END,
            CASE
              WHEN b.bans THEN NULL
              WHEN g.refusing THEN
                CASE WHEN c.refused_until > excluded.updated_at THEN c.refused_until ELSE g.refusing_window_end END
              WHEN w.banned THEN c.refused_until
              ELSE NULL END,
            CASE WHEN b.bans THEN excluded.updated_at + make_interval(secs => excluded.ban_seconds) ELSE c.banned_until END,
            GREATEST(c.updated_at, excluded.updated_at)
          FROM
            -- Windows only move forward: an instance whose clock lags cannot reset one another moved on.
            (SELECT
              GREATEST(c.minute_start, excluded.minute_start) AS minute_start,
              GREATEST(c.day_start, excluded.day_start) AS day_start,
              CASE WHEN excluded.minute_start > c.minute_start THEN 0 ELSE c.minute_used END AS minute_used,
              -- Units leased earlier today and never used are handed back to the day.
              CASE
                WHEN excluded.day_start > c.day_start THEN 0
                WHEN excluded.day_start = c.day_start THEN GREATEST(0, c.day_used - excluded.returned)
                ELSE c.day_used END AS day_used,
              c.banned_until IS NOT NULL AND c.banned_until > excluded.updated_at AS banned,
              -- Refusals so far in the window that is refusing; it resets when that window does.
              CASE WHEN c.refused_until > excluded.updated_at THEN c.refused ELSE 0 END AS streak
            ) AS w,
            LATERAL (SELECT
              CASE WHEN w.banned THEN 0 ELSE GREATEST(0, LEAST(
                excluded.wanted,
                excluded.minute_limit - w.minute_used,
                COALESCE(excluded.day_limit - w.day_used, excluded.wanted)
              )) END AS granted
            ) AS decided,
            LATERAL (SELECT
              decided.granted,
              NOT w.banned AND decided.granted = 0 AS refusing,
              CASE
                WHEN excluded.day_limit IS NOT NULL AND excluded.day_limit - w.day_used <= 0
                  THEN w.day_start + interval '1 day'
                ELSE w.minute_start + interval '1 minute' END AS refusing_window_end
            ) AS g,
            -- The first refusal is the 429; more than ban_after further ones ban the subject.
            LATERAL (SELECT
              g.refusing AND excluded.ban_after IS NOT NULL AND w.streak + 1 > excluded.ban_after + 1 AS bans
            ) AS b
        )
        RETURNING
          c.subject, c.last_grant, c.minute_start, c.minute_used, c.day_start, c.day_used, c.banned_until,
          coalesce(c.banned_until = c.updated_at + make_interval(secs => c.ban_seconds), false) AS newly_banned,
          CASE
            WHEN c.day_limit IS NOT NULL AND c.day_used >= c.day_limit THEN c.day_start + interval '1 day'
            ELSE c.minute_start + interval '1 minute' END AS refusing_window_end
      ), key_bans AS (
        -- Each refused request of a key that may be banned adds to that key's streak, which lasts as
        -- long as the window that refuses; more than ban_after after the first 429 ban the key.
        INSERT INTO api_key_bans AS k (
          api_key_id, refused, refused_until, banned_until, ban_after, ban_seconds, updated_at
        )
        SELECT i.api_key_id, 1, c.refusing_window_end, NULL, i.key_ban_after, i.ban_seconds, i.now
        FROM input i JOIN counted c ON c.subject = i.subject
        WHERE i.api_key_id IS NOT NULL AND i.key_ban_after IS NOT NULL AND NOT i.key_banned AND c.last_grant = 0
        ORDER BY i.api_key_id
        ON CONFLICT (api_key_id) DO UPDATE SET (
          refused, refused_until, banned_until, ban_after, ban_seconds, updated_at
        ) = (
          SELECT
            CASE WHEN s.banned THEN k.refused WHEN s.bans THEN 0 ELSE s.streak END,
            CASE
              WHEN s.banned THEN k.refused_until
              WHEN s.bans THEN NULL
              WHEN k.refused_until > excluded.updated_at THEN k.refused_until
              ELSE excluded.refused_until END,
            CASE
              WHEN s.bans THEN excluded.updated_at + make_interval(secs => excluded.ban_seconds)
              ELSE k.banned_until END,
            excluded.ban_after, excluded.ban_seconds, excluded.updated_at
          FROM
            (SELECT
              coalesce(k.banned_until > excluded.updated_at, false) AS banned,
              CASE WHEN k.refused_until > excluded.updated_at THEN k.refused ELSE 0 END + 1 AS streak
            ) AS t,
            LATERAL (SELECT t.banned, t.streak, NOT t.banned AND t.streak > excluded.ban_after + 1 AS bans) AS s
        )
        RETURNING
          k.api_key_id, k.banned_until,
          coalesce(k.banned_until = k.updated_at + make_interval(secs => k.ban_seconds), false) AS newly_banned
      ), usage AS (
        INSERT INTO api_key_usage AS u (api_key_id, hour, admitted, refused, units)
        -- One unit per admitted request until routes have costs.
        SELECT r.api_key_id, r.hour, sum(r.admitted), sum(r.refused), sum(r.admitted)
        FROM (
          -- Each key's own request: admitted when it was granted a unit, else refused.
          SELECT i.api_key_id, date_trunc('hour', i.now, 'UTC') AS hour,
            (c.last_grant > 0)::integer AS admitted, (c.last_grant = 0)::integer AS refused
          FROM input i JOIN counted c ON c.subject = i.subject
          WHERE i.api_key_id IS NOT NULL
          UNION ALL
          SELECT reported.api_key_id,
            date_trunc('hour', timestamptz 'epoch' + reported.hour_ms * interval '1 millisecond', 'UTC'),
            reported.admitted, reported.refused
          FROM unnest(usage_key_ids, usage_hours, usage_admitted, usage_refused)
            AS reported(api_key_id, hour_ms, admitted, refused)
        ) AS r
        GROUP BY r.api_key_id, r.hour
        ORDER BY r.api_key_id, r.hour
        ON CONFLICT (api_key_id, hour) DO UPDATE SET
          admitted = u.admitted + excluded.admitted,
          refused = u.refused + excluded.refused,
          units = u.units + excluded.units
      )
      SELECT c.subject, c.last_grant,
        (extract(epoch FROM c.minute_start) * 1000)::double precision, c.minute_used,
        (extract(epoch FROM c.day_start) * 1000)::double precision, c.day_used,
        (extract(epoch FROM
          CASE WHEN i.api_key_id IS NULL THEN c.banned_until ELSE coalesce(kb.banned_until, i.key_banned_until) END
        ) * 1000)::double precision,
        CASE WHEN i.api_key_id IS NULL THEN c.newly_banned ELSE coalesce(kb.newly_banned, false) END
      FROM counted c JOIN input i ON i.subject = c.subject LEFT JOIN key_bans kb ON kb.api_key_id = i.api_key_id;
    END
    $function$
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE webhook_events`.execute(db)
  await sql`
    CREATE TABLE api_key_usage_days AS
    SELECT api_key_id, (hour AT TIME ZONE 'UTC')::date AS day, sum(admitted)::bigint AS admitted, sum(refused)::bigint AS refused
    FROM api_key_usage GROUP BY 1, 2
  `.execute(db)
  await sql`DROP TABLE api_key_usage`.execute(db)
  await sql`ALTER TABLE api_key_usage_days RENAME TO api_key_usage`.execute(db)
  await sql`
    ALTER TABLE api_key_usage ADD PRIMARY KEY (api_key_id, day),
      ADD FOREIGN KEY (api_key_id) REFERENCES api_keys (id) ON DELETE CASCADE,
      ALTER COLUMN admitted SET DEFAULT 0, ALTER COLUMN refused SET DEFAULT 0,
      ADD CHECK (admitted >= 0), ADD CHECK (refused >= 0)
  `.execute(db)
  await sql`CREATE INDEX api_key_usage_day_idx ON api_key_usage (day)`.execute(db)
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON api_key_usage TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`
    DROP FUNCTION count_requests(text[], bigint[], bigint[], bigint[], bigint[], integer[], integer[], integer[],
      integer[], integer[], integer[], bigint[], bigint[], integer[], integer[])
  `.execute(db)
  await countPerAccount(db)
}

#!/usr/bin/env bash
# Measures what docs/scaling.md's capacity model rests on, with pgbench against a PostgreSQL server:
# counting statements per second and per Postgres core (one key per statement, and twenty), the
# ceiling of one hot key, and the list query for scale.
# Usage: CAPACITY_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres bench/capacity/run.sh
# It drops and recreates the database animal_store_capacity on that server.
set -euo pipefail
cd "$(dirname "$0")/../.."
admin=${CAPACITY_DATABASE_URL:?set CAPACITY_DATABASE_URL to a PostgreSQL server}
seconds=${CAPACITY_SECONDS:-10}
url=$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/animal_store_capacity"; console.log(u.href)' "$admin")

psql -q "$admin" -c 'DROP DATABASE IF EXISTS animal_store_capacity WITH (FORCE)' -c 'CREATE DATABASE animal_store_capacity'
DATABASE_URL=$url npm run --silent cli -- migrate >/dev/null
psql -q "$url" <<'SQL'
INSERT INTO api_keys (prefix, secret_hash, plan)
SELECT 'ask_' || lpad(n::text, 8, '0'), sha256(n::text::bytea), 'free' FROM generate_series(1, 10000) n;
INSERT INTO pets (name, category_id, status)
SELECT 'pet ' || n, 42, (ARRAY['available', 'pending', 'sold'])[n % 3 + 1] FROM generate_series(1, 10000) n;
VACUUM ANALYZE;
SQL

# CPU ticks (user + system) of the server's processes, from /proc: those of connections that have ended
# are in their parent's children's times.
postgres_cpu() {
  local ticks=0
  for stat in /proc/[0-9]*/stat; do
    [ "$(stat -c %U "$stat" 2>/dev/null)" = postgres ] || continue
    read -r -a fields < "$stat" 2>/dev/null || continue
    ticks=$((ticks + fields[13] + fields[14] + fields[15] + fields[16]))
  done
  echo "$ticks"
}

measure() {
  local label=$1 script=$2 clients=$3
  local before after tps
  before=$(postgres_cpu)
  tps=$(pgbench -n -M extended -c "$clients" -j 1 -T "$seconds" -f "bench/capacity/$script" "$url" 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  after=$(postgres_cpu)
  node -e '
    const [label, clients, tps, ticks, seconds] = process.argv.slice(1)
    const cpu = Number(ticks) / 100
    const perStatement = (cpu / (Number(tps) * Number(seconds))) * 1e6
    console.log(`| ${label} | ${clients} | ${Math.round(tps).toLocaleString("en")} | ${perStatement.toFixed(0)} | ${Math.round(1e6 / perStatement).toLocaleString("en")} |`)
  ' "$label" "$clients" "$tps" "$((after - before))" "$seconds"
}

echo "PostgreSQL: $(psql -tA "$url" -c 'SHOW server_version') ($(nproc) cores on this machine, shared with pgbench)"
echo '| statement | clients | statements/s | Postgres CPU µs/statement | statements per Postgres core-second |'
echo '|---|---:|---:|---:|---:|'
measure 'count_requests, 1 key' count-one.sql 8
measure 'count_requests, 20 keys' count-batch.sql 8
measure 'count_requests, 1 hot key' count-hot.sql 8
measure 'count_requests, 1 hot key' count-hot.sql 1
measure 'list query (GET /v1/pets?limit=20)' list.sql 8
psql -q "$admin" -c 'DROP DATABASE animal_store_capacity WITH (FORCE)'

-- One key's request, as a refill of one unit: a random one of 10,000 keys.
\set id random(1, 10000)
SELECT * FROM count_requests(
  ARRAY['key:' || :id], ARRAY[:id]::bigint[], ARRAY[(extract(epoch FROM date_trunc('minute', now())) * 1000)::bigint],
  ARRAY[(extract(epoch FROM date_trunc('day', now())) * 1000)::bigint], ARRAY[(extract(epoch FROM now()) * 1000)::bigint], ARRAY[1], ARRAY[0], ARRAY[2000000000], ARRAY[2000000000], ARRAY[10], ARRAY[900],
  '{}', '{}', '{}', '{}');

-- Every client counting for the same key: the row lock serializes them.
SELECT * FROM count_requests(
  ARRAY['key:1'], ARRAY[1]::bigint[], ARRAY[(extract(epoch FROM date_trunc('minute', now())) * 1000)::bigint],
  ARRAY[(extract(epoch FROM date_trunc('day', now())) * 1000)::bigint], ARRAY[(extract(epoch FROM now()) * 1000)::bigint], ARRAY[1], ARRAY[0], ARRAY[2000000000], ARRAY[2000000000], ARRAY[10], ARRAY[900],
  '{}', '{}', '{}', '{}');

-- Every client counting for the same key: the row lock serializes them.
SELECT * FROM count_requests(
  ARRAY['key:1'], ARRAY[1]::bigint[], ARRAY[date_trunc('minute', now())], ARRAY[date_trunc('day', now())],
  ARRAY[now()], ARRAY[1], ARRAY[0], ARRAY[2000000000], ARRAY[2000000000], ARRAY[10], ARRAY[900],
  '{}', '{}', '{}', '{}');

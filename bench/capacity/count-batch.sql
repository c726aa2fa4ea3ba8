-- Twenty keys' requests in one statement, as the limiter sends the refills due in one event-loop turn.
\set first random(1, 9981)
SELECT * FROM count_requests(
  array(SELECT 'key:' || n FROM generate_series(:first, :first + 19) n),
  array(SELECT n::bigint FROM generate_series(:first, :first + 19) n),
  array_fill((extract(epoch FROM date_trunc('minute', now())) * 1000)::bigint, ARRAY[20]),
  array_fill((extract(epoch FROM date_trunc('day', now())) * 1000)::bigint, ARRAY[20]), array_fill((extract(epoch FROM now()) * 1000)::bigint, ARRAY[20]), array_fill(1, ARRAY[20]), array_fill(0, ARRAY[20]),
  array_fill(2000000000, ARRAY[20]), array_fill(2000000000, ARRAY[20]), array_fill(10, ARRAY[20]),
  array_fill(900, ARRAY[20]), '{}', '{}', '{}', '{}');

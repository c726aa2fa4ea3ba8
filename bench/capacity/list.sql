-- The list query a GET /v1/pets?limit=20 sends, for scale.
SELECT id, name, category_id, status FROM pets ORDER BY id LIMIT 21;

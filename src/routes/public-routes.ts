/**
 * The operations of the public API as its OpenAPI document names them: method, then the path template
 * with `{param}`. A plan's costs may name these and nothing else; test/routes/docs.test.ts holds this
 * list to the document the public app serves, so a route added there and not here fails a test.
 */
export const PUBLIC_ROUTES: readonly string[] = [
  'GET /v1/pets',
  'POST /v1/pets',
  'GET /v1/pets/{petId}',
  'GET /v1/rate_limit',
  'GET /v1/keys',
  'POST /v1/keys',
  'POST /v1/keys/{id}/rotate',
  'DELETE /v1/keys/{id}'
]

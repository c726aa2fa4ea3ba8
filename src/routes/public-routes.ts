/**
 * The operations of the public API as its OpenAPI document names them: method, then the path template
 * with `{param}`. A plan's cost for a route under these paths' resources must name one of them (other
 * services' routes are free-form); test/routes/docs.test.ts holds this list to the document the public
 * app serves, so a route added there and not here fails a test.
 */
export const PUBLIC_ROUTES: readonly string[] = [
  'GET /v1/pets',
  'POST /v1/pets',
  'GET /v1/pets/{petId}',
  'GET /v1/rate_limit',
  'GET /v1/keys',
  'POST /v1/keys',
  'POST /v1/keys/{id}/rotate',
  'DELETE /v1/keys/{id}',
  'GET /v1/usage',
  'POST /v1/decisions',
  'GET /v1/authorize'
]

/**
 * V8 settings for the server process, set before any other module runs (server.ts imports this
 * first; V8 reads the flag each time an inline cache changes state).
 *
 * An inline cache stays polymorphic for up to 4 object shapes, then turns megamorphic: a slower
 * generic lookup from then on. Code shared by every request sees more shapes than that here: pg
 * builds each row by cloning a template object per query's columns and storing into it by name, and
 * sees every statement's columns (its row cloning and keyed stores showed as megamorphic in CPU
 * profiles). Allowing 16 shapes, measured against the default (three alternating rounds of 5 s, wrk
 * -c32, medians of the service's CPU per request): GET /v1/pets?limit=20 86.6 to 82.7 µs, GET
 * /v1/pets?status=available&limit=100 186.0 to 173.4 µs, GET /v1/pets/{id} 60.5 to 57.5 µs. 32 was
 * no better than 16.
 */
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--max-valid-polymorphic-map-count=16')

/**
 * V8 settings for the server process, set before any other module runs (server.ts imports this
 * first; V8 reads the flag each time an inline cache changes state).
 *
 * An inline cache stays polymorphic for up to 4 object shapes, then turns megamorphic: a slower
 * generic lookup from then on. Code shared by every request sees more shapes than that here: pg
 * builds each row by cloning a template object per query's columns and storing into it by name, and
 * sees every statement's columns (its row cloning and keyed stores showed as megamorphic in CPU
 * profiles). 16 shapes take less CPU per request than the default, and 32 no less than 16
 * (docs/benchmark.md#measurements-behind-the-code).
 */
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--max-valid-polymorphic-map-count=16')

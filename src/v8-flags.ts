/**
 * V8 settings for the server process, set before any other module runs (server.ts imports this
 * first; V8 reads the flag each time an inline cache changes state).
 *
 * An inline cache stays polymorphic for up to 4 object shapes, then turns megamorphic: a slower
 * generic lookup from then on. Code shared by every request sees more shapes than that here: pg
 * builds each row by cloning a template object per query's columns and storing into it by name, and
 * sees every statement's columns (its row cloning and keyed stores showed as megamorphic in CPU
 * profiles). 16 shapes take less CPU per request than the default, and 32 no less than 16
 * (docs/history/benchmark.md#measurements-behind-the-code).
 */
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--max-valid-polymorphic-map-count=16')
// Under load old space fills with promoted garbage up to 4 × its live size before V8 collects it; 1.25 × here.
setFlagsFromString('--heap-growing-percent=25')
// Off: V8 allocating straight in old space the objects of an allocation site it once saw survive.
// After a burst of admin calls it did so for objects that die young, and under load old space
// filled with them for as long as the load lasted (docs/benchmark.md#memory).
setFlagsFromString('--no-allocation-site-pretenuring')

/** How often the event loop's use is read, and below what share of that time the instance counts as idle. */
const IDLE_CHECK_MS = 5_000
const IDLE_UTILIZATION = 0.05

let favouring = false
let last = performance.eventLoopUtilization()

/**
 * Lets V8 give back, once the instance is idle, the heap a burst of work grew. V8 collects only as
 * it allocates, so a heap a flood or a run of admin calls grew stays committed (and resident)
 * through a quiet that allocates nothing (docs/benchmark.md#memory). Its memory reducer runs while
 * V8 is told to favour size; told so only while the event loop has been idle for a check, and told
 * otherwise by the first request after (wake), it costs nothing under load.
 */
export function favourMemoryWhenIdle(): void {
  setInterval(() => {
    const now = performance.eventLoopUtilization()
    const idle = performance.eventLoopUtilization(now, last).utilization < IDLE_UTILIZATION
    last = now
    if (idle !== favouring) {
      favouring = idle
      setFlagsFromString(idle ? '--optimize-for-size' : '--no-optimize-for-size')
    }
  }, IDLE_CHECK_MS).unref()
}

/**
 * Ends favouring size at a request's arrival, not at the next check up to 5 s later: load that
 * follows a quiet runs at full speed from its first request (docs/benchmark.md#memory).
 */
export function wake(): void {
  if (!favouring) return
  favouring = false
  last = performance.eventLoopUtilization()
  setFlagsFromString('--no-optimize-for-size')
}

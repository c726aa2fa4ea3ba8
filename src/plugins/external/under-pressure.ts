import underPressure from '@fastify/under-pressure'
import fp from 'fastify-plugin'
import { ApiError } from '../../errors.js'

const RETRY_AFTER_SECONDS = '5'

class Overloaded extends ApiError {
  constructor() {
    super('service_unavailable', 'The service is overloaded; retry later', { 'retry-after': RETRY_AFTER_SECONDS })
  }
}

/**
 * Sheds /v1 requests with 503 while this instance is overloaded (event loop delay or utilization,
 * heap), before they cost a database round trip; the health endpoints stay outside it.
 */
export default fp(
  async (app) => {
    const { config } = app
    await app.register(underPressure, {
      maxEventLoopDelay: config.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS,
      maxEventLoopUtilization: config.OVERLOAD_MAX_EVENT_LOOP_UTILIZATION,
      maxHeapUsedBytes: config.OVERLOAD_MAX_HEAP_USED_BYTES,
      customError: Overloaded
    })
  },
  { name: 'under-pressure', dependencies: ['errors'] }
)

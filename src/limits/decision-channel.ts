import { channel } from 'node:diagnostics_channel'

/** One limiter decision on a request, as its trace shows it. */
export interface PublishedDecision {
  /** `admitted`, or the refusal's code (`rate_limited`, `key_banned`, `credits_exhausted`). */
  outcome: string
  /** The windows it was decided on, as the RateLimit-Policy header names them. */
  policy: string | undefined
}

/**
 * The guard's decisions, for tracing to set on the request's span. Nothing subscribes unless tracing
 * is on, and then a request pays one `hasSubscribers` read.
 */
export const limitDecisions = channel('animal-store.limit-decision')

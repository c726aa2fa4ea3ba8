import http from 'node:http'
import https from 'node:https'
import { checkedLookup, checkEndpointUrl, RefusedAddressError, type AddressPolicy } from './address-policy.js'

/** What an endpoint's answer keeps of its body, and what a failure's message keeps. */
const KEPT_ANSWER_BYTES = 1024

/** The answer's body as text PostgreSQL can keep: it has no NUL, which neither `text` nor `jsonb` holds. */
const keptText = (body: Buffer) => body.toString().replaceAll('\u0000', '\ufffd')

export interface SendOutcome {
  /** A 2xx answer. */
  ok: boolean
  /** The HTTP status, or null when none came (refused address, connection error, timeout). */
  status: number | null
  /** The start of the answer's body, or why no answer came. */
  response: string
  /** The address policy refused the URL or what its name resolved to; nothing was sent. */
  refused: boolean
}

/**
 * POSTs one signed delivery. The URL is checked again here (the policy may have changed since it was
 * registered), and its name is resolved through the policy, so the connection goes only to addresses
 * checked. Redirects are not followed: a 3xx is a failed attempt.
 */
export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  payload: string,
  options: { policy: AddressPolicy; timeoutMs: number }
): Promise<SendOutcome> {
  let target: URL
  try {
    target = checkEndpointUrl(url, options.policy)
  } catch (error) {
    return { ok: false, status: null, response: (error as Error).message, refused: true }
  }
  const body = Buffer.from(payload)
  const client = target.protocol === 'https:' ? https : http
  return new Promise<SendOutcome>((resolve) => {
    const request = client.request(
      target,
      {
        method: 'POST',
        lookup: checkedLookup(options.policy),
        timeout: options.timeoutMs,
        agent: false,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(body.length),
          'user-agent': 'animal-store-webhooks/1'
        }
      },
      (response) => {
        const chunks: Buffer[] = []
        let kept = 0
        response.on('data', (chunk: Buffer) => {
          if (kept < KEPT_ANSWER_BYTES) chunks.push(chunk.subarray(0, KEPT_ANSWER_BYTES - kept))
          kept += chunk.length
        })
        response.on('end', () => {
          const status = response.statusCode ?? 0
          clearTimeout(deadline)
          resolve({
            ok: status >= 200 && status < 300,
            status,
            response: keptText(Buffer.concat(chunks)),
            refused: false
          })
        })
        response.on('error', fail)
      }
    )
    // The whole exchange, not only a silence, is bounded: a receiver that trickles its answer times out too.
    const deadline = setTimeout(
      () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)),
      options.timeoutMs
    )
    function fail(error: Error) {
      clearTimeout(deadline)
      const refused = error instanceof RefusedAddressError
      resolve({ ok: false, status: null, response: error.message.slice(0, KEPT_ANSWER_BYTES), refused })
    }
    request.on('timeout', () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)))
    request.on('error', fail)
    request.end(body)
  })
}

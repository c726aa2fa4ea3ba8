import type { FastifyInstance, InjectOptions } from 'fastify'

type Response = Awaited<ReturnType<FastifyInstance['inject']>>

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/** Waits for the next UTC minute when fewer than `seconds` are left of this one, so what follows falls within one minute. */
export async function withinOneMinute(seconds: number) {
  const second = new Date().getUTCSeconds()
  if (second > 60 - seconds) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000))
}

/** Sends `count` requests, `concurrency` at a time, and returns them in order. */
export async function fire(app: FastifyInstance, count: number, options: InjectOptions, concurrency = 25) {
  const responses: Response[] = []
  for (let start = 0; start < count; start += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, count - start) }, () => app.inject(options))
    responses.push(...(await Promise.all(batch)))
  }
  return responses
}

/** Keeps `concurrency` requests in flight until one is refused, then lets those in flight finish. */
export async function fireUntilRefused(app: FastifyInstance, options: InjectOptions, concurrency: number, cap = 5_000) {
  const responses: Response[] = []
  let refused = false
  const worker = async () => {
    while (!refused && responses.length < cap) {
      const response = await app.inject(options)
      responses.push(response)
      if (response.statusCode === 429) refused = true
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return responses
}

/** How many responses had each status. */
export const statuses = (responses: { statusCode: number }[]) =>
  responses.reduce<Record<number, number>>(
    (tally, { statusCode }) => ({ ...tally, [statusCode]: (tally[statusCode] ?? 0) + 1 }),
    {}
  )

import { connect } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { onTestFinished } from 'vitest'
import { manualClock } from './app.js'
import type { TestDatabase } from './database.js'
import type { FastifyInstance, InjectOptions } from 'fastify'

type Response = Awaited<ReturnType<FastifyInstance['inject']>>

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/**
 * The answer to a request written as it stands to a new connection: for what inject cannot send, such
 * as a header line twice, which Node's server, not inject, decides the meaning of. Header names in
 * lower case.
 */
export function rawRequest(port: number, head: string, body = '') {
  return new Promise<{ statusCode: number; headers: Record<string, string>; body: string; json(): any }>(
    (resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(head + body))
      let text = ''
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => (text += chunk))
      socket.on('error', reject)
      socket.on('close', () => {
        const split = text.indexOf('\r\n\r\n')
        const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n')
        const headers = Object.fromEntries(
          lines.map((line) => [
            line.slice(0, line.indexOf(':')).toLowerCase(),
            line.slice(line.indexOf(':') + 1).trim()
          ])
        )
        const answer = text.slice(split + 4)
        resolve({ statusCode: Number(statusLine.split(' ')[1]), headers, body: answer, json: () => JSON.parse(answer) })
      })
    }
  )
}

/**
 * Holds the database's clock still at this instant until the test ends (or `release`), so that what
 * follows falls within one minute, hour and day whenever the test runs: the limits are decided on that
 * clock, and the instances measure theirs from it. The clock's `clock()` is the instant held.
 */
export async function holdDatabaseClock(database: TestDatabase) {
  const clock = manualClock(Date.now(), () => database)
  await clock.set(clock())
  onTestFinished(() => clock.release())
  return clock
}

/**
 * Waits for the next UTC minute when less than `ms` of this one is left, so that what a test sends in
 * the next `ms` falls in one minute of a server's address budget, which runs on the real clock there.
 */
export async function awayFromMinuteEnd(ms: number) {
  const left = 60_000 - (Date.now() % 60_000)
  if (left < ms) await sleep(left + 50)
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

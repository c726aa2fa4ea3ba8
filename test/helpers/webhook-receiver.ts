import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { Webhook } from 'standardwebhooks'

export interface ReceivedWebhook {
  id: string
  type: string
  timestamp: string
  data: Record<string, unknown>
  signature: string
  /** The W3C traceparent the delivery carried, if any. */
  traceparent: string | undefined
}

/**
 * A local webhook endpoint that verifies every delivery with the `standardwebhooks` package and keeps
 * those it accepts. It can be taken down (its port closed) and brought back on the same port, answer
 * slowly, and counts deliveries that overlapped.
 */
export async function startWebhookReceiver(options: { answerMs?: number } = {}) {
  const received: ReceivedWebhook[] = []
  const rejected: string[] = []
  let secrets: string[] = []
  let inFlight = 0
  let overlaps = 0
  let status = 204
  let answerBody: string | undefined
  const sockets = new Set<Socket>()

  const read = (request: IncomingMessage) =>
    new Promise<string>((resolve, reject) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => resolve(Buffer.concat(chunks).toString()))
      request.on('error', reject)
    })

  const server: Server = createServer((request, response) => {
    inFlight++
    if (inFlight > 1) overlaps++
    void (async () => {
      const body = await read(request)
      const headers = request.headers as Record<string, string>
      // Every secret the test says is in force must accept the delivery on its own.
      const verified = secrets.every((secret) => {
        try {
          new Webhook(secret).verify(body, headers)
          return true
        } catch {
          return false
        }
      })
      if (options.answerMs) await new Promise((resolve) => setTimeout(resolve, options.answerMs))
      inFlight--
      if (!verified || secrets.length === 0) {
        rejected.push(body)
        response.writeHead(401).end('signature refused')
        return
      }
      if (status < 300) {
        const message = JSON.parse(body) as Omit<ReceivedWebhook, 'id' | 'signature' | 'traceparent'>
        received.push({
          ...message,
          id: headers['webhook-id']!,
          signature: headers['webhook-signature']!,
          traceparent: headers.traceparent
        })
      }
      response.writeHead(status).end(answerBody ?? (status < 300 ? '' : 'not now'))
    })()
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    received,
    rejected,
    get overlaps() {
      return overlaps
    },
    /** The secrets each of which must verify every delivery. */
    trust(...given: string[]) {
      secrets = given
    },
    /** Answers every delivery with this status from now on, and this body when given. */
    answer(code: number, body?: string) {
      status = code
      answerBody = body
    },
    /** Closes the port: connections are refused until `up`. */
    async down() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
    async up() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    },
    async close() {
      for (const socket of sockets) socket.destroy()
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

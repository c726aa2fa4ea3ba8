import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net'

/**
 * A TCP relay in front of PostgreSQL that counts the queries answered through it: every
 * ReadyForQuery message after a session's first (which only ends its start-up) closes one simple
 * query or one extended-protocol Sync, so the count is at least the transactions the clients ran.
 * It keeps the text of each query the clients send (a simple Query or an extended Parse), in order.
 * The clients must not ask for TLS (the relay reads both sides' messages from their first byte).
 */
export async function startRoundTripCounter(target: { host: string; port: number }) {
  let answered = 0
  const sent: string[] = []
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = createConnection(target)
    sockets.add(client).add(upstream)
    let pending = Buffer.alloc(0)
    let readies = 0
    // The client's first message, its start-up, has no type byte: a length that counts itself, then the body.
    let fromClient = Buffer.alloc(0)
    let startedUp = false
    client.on('data', (chunk: Buffer) => {
      fromClient = Buffer.concat([fromClient, chunk])
      for (;;) {
        const typed = startedUp ? 1 : 0
        if (fromClient.length < typed + 4) break
        const length = fromClient.readInt32BE(typed)
        if (fromClient.length < typed + length) break
        const type = typed ? fromClient[0] : undefined
        const body = fromClient.subarray(typed + 4, typed + length)
        // Query: the text; Parse: the statement's name, then the text, each ending in a zero byte.
        if (type === 0x51) sent.push(body.toString('utf8', 0, body.indexOf(0)))
        if (type === 0x50) {
          const text = body.subarray(body.indexOf(0) + 1)
          sent.push(text.toString('utf8', 0, text.indexOf(0)))
        }
        fromClient = fromClient.subarray(typed + length)
        startedUp = true
      }
    })
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      // Each backend message: a type byte, then an int32 length that counts itself and the body.
      while (pending.length >= 5) {
        const length = pending.readInt32BE(1)
        if (pending.length < 1 + length) break
        if (pending[0] === 0x5a && ++readies > 1) answered++
        pending = pending.subarray(1 + length)
      }
      client.write(chunk)
    })
    client.on('data', (chunk) => upstream.write(chunk))
    const close = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('close', close).on('error', close)
    upstream.on('close', close).on('error', close)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    /** Queries answered so far, start-ups left out. */
    answered: () => answered,
    /** The text of every query sent so far, in the order the relay read them. */
    sent: () => sent,
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

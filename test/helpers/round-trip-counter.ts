import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net'

/**
 * A TCP relay in front of PostgreSQL that counts the queries answered through it: every
 * ReadyForQuery message after a session's first (which only ends its start-up) closes one simple
 * query or one extended-protocol Sync, so the count is at least the transactions the clients ran.
 * The clients must not ask for TLS (the relay reads the server's messages from their first byte).
 */
export async function startRoundTripCounter(target: { host: string; port: number }) {
  let answered = 0
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = createConnection(target)
    sockets.add(client).add(upstream)
    let pending = Buffer.alloc(0)
    let readies = 0
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
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

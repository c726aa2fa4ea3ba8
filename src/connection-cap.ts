import type { Server } from 'node:http'
import type { Socket } from 'node:net'

/**
 * Caps the connections a server holds open at `max` (0: no cap). A connection past it first makes
 * room by closing the keep-alive connection idle the longest (one that has been answered and has
 * no request in flight); when every connection has a request in flight, it is itself closed at once.
 * Each open connection holds socket buffers and parser state, so a flood of connections that wait
 * costs memory however few requests they send.
 */
export function capConnections(server: Server, max: number): void {
  if (max === 0) return
  let open = 0
  /** Requests in flight on each connection that has sent one. */
  const inFlight = new WeakMap<Socket, number>()
  /** Connections answered and idle since, the longest idle first (a Set keeps insertion order). */
  const idle = new Set<Socket>()

  server.on('connection', (socket: Socket) => {
    if (open >= max) {
      const [longest] = idle
      if (longest === undefined) {
        socket.destroy()
        return
      }
      idle.delete(longest)
      longest.destroy()
    }
    open++
    socket.once('close', () => {
      open--
      idle.delete(socket)
    })
  })
  server.on('request', (request, response) => {
    const { socket } = request
    idle.delete(socket)
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1)
    response.once('close', () => {
      const left = inFlight.get(socket)! - 1
      inFlight.set(socket, left)
      if (left === 0 && !socket.destroyed) idle.add(socket)
    })
  })
}

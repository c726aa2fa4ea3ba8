import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/**
 * Caps the connections a server holds open at `max` (0: no cap). A connection past it first makes
 * room by closing the keep-alive connection idle the longest: one that has been answered and has no
 * request in flight, or whose request is only waiting for its shed answer (`isShed`); when every
 * connection has a request in flight, it is itself closed at once. Each open connection holds socket
 * buffers and parser state, so a flood of connections that wait costs memory however few requests
 * they send.
 */
export function capConnections(server: Server, max: number, isShed: (request: IncomingMessage) => boolean): void {
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
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request
    idle.delete(socket)
    // Decided by the server's own listener, which ran first: a shed request is owed nothing but its 429.
    if (isShed(request)) {
      if (!inFlight.get(socket)) idle.add(socket)
      return
    }
    inFlight.set(socket, (inFlight.get(socket) ?? 0) + 1)
    response.once('close', () => {
      const left = inFlight.get(socket)! - 1
      inFlight.set(socket, left)
      if (left === 0 && !socket.destroyed) idle.add(socket)
    })
  })
}

import { EventEmitter } from 'node:events'
import type { ChangeListener } from '../../../src/auth/key-cache.js'

/**
 * A listening session in memory: it takes LISTEN and NOTIFY as Postgres does, delivering a
 * notification only on a channel it listens to, a NOTIFY of its own once the statement is done.
 * `hung` freezes it as a stopped backend would: statements never answer, nothing arrives.
 */
export class FakeListener extends EventEmitter implements ChangeListener {
  readonly channels = new Set<string>()
  readonly statements: string[] = []
  /** Where pg keeps the socket; the cache destroys it when the session is lost. */
  readonly connection = { stream: { destroyed: false, destroy: () => (this.connection.stream.destroyed = true) } }
  hung = false
  connectError: Error | undefined
  queryError: Error | undefined
  ended = false

  async connect(): Promise<void> {
    if (this.connectError) throw this.connectError
  }

  query(text: string): Promise<unknown> {
    this.statements.push(text)
    if (this.hung) return new Promise(() => {})
    if (this.queryError) return Promise.reject(this.queryError)
    for (const statement of text.split(';')) {
      const [, verb, channel, payload] = /^(\w+) (\w+)(?:, '([\w-]*)')?$/.exec(statement.trim()) ?? []
      if (verb === 'LISTEN') this.channels.add(channel!)
      else if (verb === 'NOTIFY') queueMicrotask(() => this.notify(channel!, payload))
      else throw new Error(`the listener was sent a statement the fake does not know: ${statement}`)
    }
    return Promise.resolve({})
  }

  /** Delivers a notification, if the session is alive and listens on the channel. */
  notify(channel: string, payload = ''): void {
    if (this.hung || this.ended || !this.channels.has(channel)) return
    this.emit('notification', { processId: 1, channel, payload })
  }

  /** Counts the heartbeats sent: NOTIFYs on the session's own channel. */
  get heartbeats(): number {
    return this.statements.filter((text) => text.startsWith('NOTIFY api_keys_heartbeat_')).length
  }

  async end(): Promise<void> {
    if (this.ended) return
    this.ended = true
    this.emit('end')
  }
}

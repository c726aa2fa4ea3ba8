import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import { ApiFailure } from '../api.js'

export type Loaded<T> =
  { state: 'loading' } | { state: 'failed'; message: string; unavailable: boolean } | { state: 'done'; value: T }

/** Loads once per change of `deps`, and again on reload(). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    load().then(
      (value) => current && setLoaded({ state: 'done', value }),
      (error: unknown) =>
        current &&
        setLoaded({
          state: 'failed',
          message: error instanceof Error ? error.message : String(error),
          unavailable: error instanceof ApiFailure && error.status === 404
        })
    )
    return () => {
      current = false
    }
  }, [...deps, round])
  return [loaded, useCallback(() => setRound((value) => value + 1), [])]
}

/** What a page shows while it loads, when it fails, and when this server's admin API lacks the endpoint. */
export function Await<T>(props: { loaded: Loaded<T>; what: string; children: (value: T) => ComponentChildren }) {
  const { loaded, what } = props
  if (loaded.state === 'loading') return <p role="status">Loading {what}…</p>
  if (loaded.state === 'failed') {
    if (loaded.unavailable) {
      return (
        <p role="status" class="notice">
          {capitalize(what)}: not available on this server ({loaded.message}).
        </p>
      )
    }
    return (
      <p role="alert" class="error">
        Could not load {what}: {loaded.message}
      </p>
    )
  }
  return <>{props.children(loaded.value)}</>
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

export const NotAvailable = ({ what }: { what: string }) => (
  <p role="status" class="notice">
    {capitalize(what)}: not available on this server.
  </p>
)

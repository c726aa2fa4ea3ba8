import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'

export type Loaded<T> = { state: 'loading' } | { state: 'failed'; message: string } | { state: 'done'; value: T }

/** Loads once per change of `deps`, and again on reload(). */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    load().then(
      (value) => current && setLoaded({ state: 'done', value }),
      (error: unknown) =>
        current && setLoaded({ state: 'failed', message: error instanceof Error ? error.message : String(error) })
    )
    return () => {
      current = false
    }
  }, [...deps, round])
  return [loaded, useCallback(() => setRound((value) => value + 1), [])]
}

/** What a page shows while it loads and when it fails. */
export function Await<T>(props: { loaded: Loaded<T>; what: string; children: (value: T) => ComponentChildren }) {
  const { loaded, what } = props
  if (loaded.state === 'loading') return <p role="status">Loading {what}…</p>
  if (loaded.state === 'failed') {
    return (
      <p role="alert" class="error">
        Could not load {what}: {loaded.message}
      </p>
    )
  }
  return <>{props.children(loaded.value)}</>
}

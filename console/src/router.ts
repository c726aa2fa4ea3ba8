import { useEffect, useState } from 'preact/hooks'
import { href, parseRoute, type Route } from './routes.js'

export { href, type Route }

export function navigate(path: string, query: Record<string, string | undefined> = {}) {
  location.hash = href(path, query)
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash))
    addEventListener('hashchange', update)
    return () => removeEventListener('hashchange', update)
  }, [])
  return route
}

// Pages live in the fragment (#/keys/7), so the admin listener serves one document for all of them.
export type Route =
  | { page: 'keys'; query: URLSearchParams }
  | { page: 'key'; id: string }
  | { page: 'accounts'; query: URLSearchParams }
  | { page: 'account'; id: string }
  | { page: 'events'; query: URLSearchParams }
  | { page: 'plans' }
  | { page: 'webhooks'; query: URLSearchParams }
  | { page: 'webhook'; id: string; query: URLSearchParams }
  | { page: 'missing' }

export function parseRoute(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#/, '').split('?')
  const query = new URLSearchParams(search)
  const parts = path.split('/').filter(Boolean)
  const [section, id] = parts
  if (parts.length === 0) return { page: 'keys', query }
  if (parts.length > 2) return { page: 'missing' }
  if (section === 'keys') return id === undefined ? { page: 'keys', query } : { page: 'key', id }
  if (section === 'accounts') return id === undefined ? { page: 'accounts', query } : { page: 'account', id }
  if (section === 'events' && id === undefined) return { page: 'events', query }
  if (section === 'plans' && id === undefined) return { page: 'plans' }
  if (section === 'webhooks') return id === undefined ? { page: 'webhooks', query } : { page: 'webhook', id, query }
  return { page: 'missing' }
}

export const href = (path: string, query: Record<string, string | undefined> = {}) => {
  const search = new URLSearchParams(
    Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')
  ).toString()
  return `#${path}${search ? `?${search}` : ''}`
}

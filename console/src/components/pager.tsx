import { href } from '../router.js'

/** Cursor paging: the API's `Link: rel="next"` becomes the next page's address in the console. */
export function Pager(props: {
  path: string
  query: Record<string, string | undefined>
  next: string | undefined
  paged: boolean
}) {
  const cursor = props.next === undefined ? undefined : new URL(props.next, location.href).searchParams.get('cursor')
  if (!props.paged && !cursor) return null
  return (
    <nav class="pager" aria-label="Pages">
      {props.paged && <a href={href(props.path, { ...props.query, cursor: undefined })}>First page</a>}
      {cursor && <a href={href(props.path, { ...props.query, cursor })}>Next page</a>}
    </nav>
  )
}

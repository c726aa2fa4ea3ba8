import { useState } from 'preact/hooks'
import { getPage, type AuditEvent } from '../api.js'
import { ColumnHeads } from '../components/column-heads.js'
import { Await, useLoad } from '../components/load.js'
import { Pager } from '../components/pager.js'
import { changes, instant } from '../format.js'
import { href, navigate } from '../router.js'

export function EventsPage({ query }: { query: URLSearchParams }) {
  const accountId = query.get('accountId') ?? ''
  const keyId = query.get('keyId') ?? ''
  const cursor = query.get('cursor') ?? undefined
  const search = new URLSearchParams({ limit: '50' })
  if (accountId) search.set('accountId', accountId)
  if (keyId) search.set('keyId', keyId)
  if (cursor) search.set('cursor', cursor)
  const path = `events?${search}`
  const [loaded] = useLoad(() => getPage<AuditEvent>(path), [path])
  const [account, setAccount] = useState(accountId)
  const [key, setKey] = useState(keyId)
  return (
    <>
      <h1>Events</h1>
      <form
        role="search"
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault()
          navigate('/events', { accountId: account, keyId: key })
        }}
      >
        <label>
          Account id
          <input inputMode="numeric" value={account} onInput={(event) => setAccount(event.currentTarget.value)} />
        </label>
        <label>
          Key id
          <input inputMode="numeric" value={key} onInput={(event) => setKey(event.currentTarget.value)} />
        </label>
        <button type="submit">Filter</button>
      </form>
      <Await loaded={loaded} what="events">
        {(page) => (
          <>
            {page.items.length === 0 ? <p>No events.</p> : <EventsTable events={page.items} />}
            <Pager path="/events" query={{ accountId, keyId }} next={page.next} paged={cursor !== undefined} />
          </>
        )}
      </Await>
    </>
  )
}

function EventsTable({ events }: { events: AuditEvent[] }) {
  return (
    <table aria-label="Events">
      <ColumnHeads names={['At', 'Action', 'Actor', 'Account', 'Key', 'Changes']} />
      <tbody>
        {events.map((event) => (
          <tr key={event.id}>
            <th scope="row">{instant(event.at)}</th>
            <td>{event.action}</td>
            <td>{event.actor}</td>
            <td>
              {event.accountId === null ? '—' : <a href={href(`/accounts/${event.accountId}`)}>{event.accountId}</a>}
            </td>
            <td>{event.keyId === null ? '—' : <a href={href(`/keys/${event.keyId}`)}>{event.keyId}</a>}</td>
            <td>
              {Object.keys(event.changes).length === 0 ? (
                '—'
              ) : (
                <ul class="changes">
                  {changes(event.changes).map((line) => (
                    <li key={line}>
                      <code>{line}</code>
                    </li>
                  ))}
                </ul>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

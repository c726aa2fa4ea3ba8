import type { Key } from '../api.js'
import { instant } from '../format.js'
import { href } from '../router.js'
import { ColumnHeads } from './column-heads.js'

/** Keys as a table with the accessible name given, each prefix a link to the key's page. */
export function KeysTable(props: { keys: Key[]; label: string }) {
  if (props.keys.length === 0) return <p>No keys.</p>
  return (
    <table aria-label={props.label}>
      <ColumnHeads names={['Prefix', 'Name', 'Plan', 'Scopes', 'Created', 'Expires', 'Revoked']} />
      <tbody>
        {props.keys.map((key) => (
          <tr key={key.id}>
            <th scope="row">
              <a href={href(`/keys/${key.id}`)}>{key.prefix}</a>
            </th>
            <td>{key.name ?? '—'}</td>
            <td>{key.plan}</td>
            <td>{key.scopes.length === 0 ? '—' : key.scopes.join(', ')}</td>
            <td>{instant(key.createdAt)}</td>
            <td>{instant(key.expiresAt)}</td>
            <td>{instant(key.revokedAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

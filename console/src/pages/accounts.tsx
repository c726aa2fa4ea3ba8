import { useState } from 'preact/hooks'
import { getPage, post, type Account, type NewAccount } from '../api.js'
import { ColumnHeads } from '../components/column-heads.js'
import { Dialog, failureMessage, FormActions } from '../components/dialog.js'
import { usePlanChoice } from '../components/forms.js'
import { Await, useLoad } from '../components/load.js'
import { Pager } from '../components/pager.js'
import { accountName, instant } from '../format.js'
import { Allowed } from '../identity.js'
import { href, navigate } from '../router.js'

export function AccountsPage({ query }: { query: URLSearchParams }) {
  const externalId = query.get('externalId') ?? ''
  const cursor = query.get('cursor') ?? undefined
  const search = new URLSearchParams({ limit: '20' })
  if (externalId) search.set('externalId', externalId)
  if (cursor) search.set('cursor', cursor)
  const path = `accounts?${search}`
  const [loaded] = useLoad(() => getPage<Account>(path), [path])
  const [searchText, setSearchText] = useState(externalId)
  const [nameFilter, setNameFilter] = useState('')
  const [creating, setCreating] = useState(false)
  return (
    <>
      <h1>Accounts</h1>
      <form
        role="search"
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault()
          navigate('/accounts', { externalId: searchText })
        }}
      >
        <label>
          External id
          <input value={searchText} onInput={(event) => setSearchText(event.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
        <label>
          Name on this page contains
          <input value={nameFilter} onInput={(event) => setNameFilter(event.currentTarget.value)} />
        </label>
        <Allowed>
          <button type="button" onClick={() => setCreating(true)}>
            Create account
          </button>
        </Allowed>
      </form>
      <Await loaded={loaded} what="accounts">
        {(page) => {
          const shown = page.items.filter((account) =>
            (account.name ?? '').toLowerCase().includes(nameFilter.toLowerCase())
          )
          return (
            <>
              {shown.length === 0 ? <p>No accounts.</p> : <AccountsTable accounts={shown} />}
              <Pager path="/accounts" query={{ externalId }} next={page.next} paged={cursor !== undefined} />
            </>
          )
        }}
      </Await>
      {creating && (
        <CreateAccountDialog
          onClose={() => setCreating(false)}
          onCreated={(account) => navigate(`/accounts/${account.id}`)}
        />
      )}
    </>
  )
}

function AccountsTable({ accounts }: { accounts: Account[] }) {
  return (
    <table aria-label="Accounts">
      <ColumnHeads names={['External id', 'Name', 'Plan', 'Created', 'Closed']} />
      <tbody>
        {accounts.map((account) => (
          <tr key={account.id}>
            <th scope="row">
              <a href={href(`/accounts/${account.id}`)}>{accountName(account)}</a>
            </th>
            <td>{account.name ?? '—'}</td>
            <td>{account.plan}</td>
            <td>{instant(account.createdAt)}</td>
            <td>{instant(account.closedAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function CreateAccountDialog(props: { onClose: () => void; onCreated: (account: Account) => void }) {
  const plan = usePlanChoice()
  const [externalId, setExternalId] = useState('')
  const [name, setName] = useState('')
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      const body = {
        externalId: externalId === '' ? undefined : externalId,
        name: name === '' ? undefined : name,
        ...plan.value()
      }
      props.onCreated(await post<Account>('accounts', body satisfies NewAccount))
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title="Create account" onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <label>
          External id (optional)
          <input
            maxLength={255}
            pattern="[A-Za-z0-9._:\-]+"
            value={externalId}
            onInput={(event) => setExternalId(event.currentTarget.value)}
          />
        </label>
        <label>
          Name
          <input value={name} maxLength={255} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        {plan.fields}
        <FormActions failure={failure} submit="Create" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

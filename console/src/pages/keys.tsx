import { useState } from 'preact/hooks'
import { getPage, post, type IssuedKey, type Key, type NewKey } from '../api.js'
import { Dialog, failureMessage, SecretDialog, FormActions } from '../components/dialog.js'
import { useAccessChoice, usePlanChoice, useScopesChoice, utcInstant } from '../components/forms.js'
import { KeysTable } from '../components/keys-table.js'
import { Await, useLoad } from '../components/load.js'
import { Pager } from '../components/pager.js'
import { Allowed } from '../identity.js'

export function KeysPage(props: { query: URLSearchParams }) {
  const cursor = props.query.get('cursor') ?? undefined
  const path = `keys?limit=20${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
  const [loaded, reload] = useLoad(() => getPage<Key>(path), [path])
  const [creating, setCreating] = useState(false)
  const [issued, setIssued] = useState<IssuedKey>()
  return (
    <>
      <h1>Keys</h1>
      <Allowed>
        <div class="toolbar">
          <button type="button" onClick={() => setCreating(true)}>
            Create key
          </button>
        </div>
      </Allowed>
      <Await loaded={loaded} what="keys">
        {(page) => (
          <>
            <KeysTable keys={page.items} label="Keys" />
            <Pager path="/keys" query={{}} next={page.next} paged={cursor !== undefined} />
          </>
        )}
      </Await>
      {creating && (
        <CreateKeyDialog
          onClose={() => setCreating(false)}
          onCreated={(key) => {
            setCreating(false)
            setIssued(key)
            reload()
          }}
        />
      )}
      {issued && (
        <SecretDialog title={`Key ${issued.prefix} created`} secret={issued.key} onClose={() => setIssued(undefined)} />
      )}
    </>
  )
}

export function CreateKeyDialog(props: { account?: string; onClose: () => void; onCreated: (key: IssuedKey) => void }) {
  const plan = usePlanChoice()
  const scopes = useScopesChoice()
  const access = useAccessChoice()
  const [name, setName] = useState('')
  const [expires, setExpires] = useState('')
  const [account, setAccount] = useState(props.account ?? '')
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    setFailure(undefined)
    try {
      const body = {
        // A key of an existing account has the account's plan and windows.
        ...(account === '' ? plan.value() : {}),
        name: name === '' ? undefined : name,
        expiresAt: utcInstant(expires),
        scopes: scopes.value(),
        account: account === '' ? undefined : account,
        ...access.value()
      }
      props.onCreated(await post<IssuedKey>('keys', body satisfies NewKey))
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title="Create key" onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <label>
          Account (id or external id; empty for a new account)
          <input value={account} onInput={(event) => setAccount(event.currentTarget.value)} />
        </label>
        <label>
          Name
          <input value={name} maxLength={255} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        {account === '' ? plan.fields : <p>The key shares the account's plan and windows.</p>}
        {scopes.fields}
        <label>
          Expires (UTC, optional)
          <input type="datetime-local" value={expires} onInput={(event) => setExpires(event.currentTarget.value)} />
        </label>
        {access.fields}
        <FormActions failure={failure} submit="Create" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

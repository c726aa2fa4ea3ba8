import { Fragment } from 'preact'
import { useState } from 'preact/hooks'
import { get, getPage, post, type Account, type Features, type IssuedKey, type Key } from '../api.js'
import { Confirm, SecretDialog } from '../components/dialog.js'
import { KeysTable } from '../components/keys-table.js'
import { Await, NotAvailable, useLoad } from '../components/load.js'
import { Usage } from '../components/usage.js'
import { instant } from '../format.js'
import { href } from '../router.js'
import { CreateKeyDialog } from './keys.js'

type Open = { dialog: 'create-key' } | { dialog: 'close' } | { dialog: 'secret'; key: IssuedKey } | undefined

export function AccountPage(props: { id: string; features: Features }) {
  if (!props.features.accounts) {
    return (
      <>
        <h1>Account</h1>
        <NotAvailable what="accounts" />
      </>
    )
  }
  return <AccountView id={props.id} features={props.features} />
}

/** An account as the API reports it; `windows`, where present, is how its minute and day stand now. */
type AccountDetail = Account & { windows?: Record<string, unknown> }

function AccountView({ id, features }: { id: string; features: Features }) {
  const [loaded, reload] = useLoad(() => get<AccountDetail>(`accounts/${id}`), [id])
  const [keys, reloadKeys] = useLoad(() => getPage<Key>(`accounts/${id}/keys`), [id])
  const [open, setOpen] = useState<Open>()
  const close = () => setOpen(undefined)
  return (
    <Await loaded={loaded} what="the account">
      {(account) => (
        <>
          <h1>Account {account.externalId}</h1>
          <dl class="facts">
            <dt>External id</dt>
            <dd>{account.externalId}</dd>
            <dt>Name</dt>
            <dd>{account.name ?? '—'}</dd>
            <dt>Plan</dt>
            <dd>
              {account.plan} ({account.perMinute.toLocaleString('en')} a minute, {account.perDay.toLocaleString('en')} a
              day)
            </dd>
            {account.windows &&
              Object.entries(account.windows).map(([window, standing]) => (
                <Fragment key={window}>
                  <dt>Window: {window}</dt>
                  <dd>{typeof standing === 'object' ? JSON.stringify(standing) : String(standing)}</dd>
                </Fragment>
              ))}
            <dt>Created</dt>
            <dd>{instant(account.createdAt)}</dd>
            <dt>Closed</dt>
            <dd>{instant(account.closedAt)}</dd>
          </dl>
          <div class="toolbar">
            {features.events && <a href={href('/events', { accountId: String(account.id) })}>Events of this account</a>}
            {account.closedAt === null && (
              <>
                <button type="button" onClick={() => setOpen({ dialog: 'create-key' })}>
                  Create key
                </button>
                <button type="button" class="danger" onClick={() => setOpen({ dialog: 'close' })}>
                  Close account
                </button>
              </>
            )}
          </div>
          <h2>Keys</h2>
          <Await loaded={keys} what="the account's keys">
            {(page) => <KeysTable keys={page.items} label={`Keys of ${account.externalId}`} scopes={features.scopes} />}
          </Await>
          <Usage path={`accounts/${account.id}/usage`} subject={`account ${account.externalId}`} />
          {open?.dialog === 'create-key' && (
            <CreateKeyDialog
              features={features}
              account={String(account.id)}
              onClose={close}
              onCreated={(key) => {
                setOpen({ dialog: 'secret', key })
                reloadKeys()
              }}
            />
          )}
          {open?.dialog === 'secret' && (
            <SecretDialog title={`Key ${open.key.prefix} created`} secret={open.key.key} onClose={close} />
          )}
          {open?.dialog === 'close' && (
            <Confirm
              title={`Close account ${account.externalId}?`}
              action="Close account"
              onClose={close}
              onConfirm={async () => {
                await post<Account>(`accounts/${account.id}/close`)
                close()
                reload()
                reloadKeys()
              }}
            >
              <p>Every key of the account is revoked at once, on every instance. This cannot be undone.</p>
            </Confirm>
          )}
        </>
      )}
    </Await>
  )
}

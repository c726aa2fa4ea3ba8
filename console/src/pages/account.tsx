import { useState } from 'preact/hooks'
import { get, getPage, post, type Account, type IssuedKey, type Key } from '../api.js'
import { Confirm, SecretDialog } from '../components/dialog.js'
import { KeysTable } from '../components/keys-table.js'
import { Await, useLoad } from '../components/load.js'
import { Usage } from '../components/usage.js'
import { Windows } from '../components/windows.js'
import { accountName, instant } from '../format.js'
import { href } from '../router.js'
import { CreateKeyDialog } from './keys.js'

type Open = { dialog: 'create-key' } | { dialog: 'close' } | { dialog: 'secret'; key: IssuedKey } | undefined

export function AccountPage({ id }: { id: string }) {
  const [loaded, reload] = useLoad(() => get<Account>(`accounts/${id}`), [id])
  const [keys, reloadKeys] = useLoad(() => getPage<Key>(`accounts/${id}/keys`), [id])
  const [open, setOpen] = useState<Open>()
  const close = () => setOpen(undefined)
  return (
    <Await loaded={loaded} what="the account">
      {(account) => (
        <>
          <h1>Account {accountName(account)}</h1>
          <dl class="facts">
            <dt>Id</dt>
            <dd>{account.id}</dd>
            <dt>External id</dt>
            <dd>{account.externalId ?? '—'}</dd>
            <dt>Name</dt>
            <dd>{account.name ?? '—'}</dd>
            <dt>Plan</dt>
            <dd>{account.plan}</dd>
            <dt>Created</dt>
            <dd>{instant(account.createdAt)}</dd>
            <dt>Closed</dt>
            <dd>{instant(account.closedAt)}</dd>
          </dl>
          <div class="toolbar">
            <a href={href('/events', { accountId: String(account.id) })}>Events of this account</a>
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
          <Windows accountId={account.id} subject={`account ${accountName(account)}`} />
          <h2>Keys</h2>
          <Await loaded={keys} what="the account's keys">
            {(page) => <KeysTable keys={page.items} label={`Keys of account ${accountName(account)}`} />}
          </Await>
          <Usage path={`accounts/${account.id}/usage`} subject={`account ${accountName(account)}`} />
          {open?.dialog === 'create-key' && (
            <CreateKeyDialog
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
              title={`Close account ${accountName(account)}?`}
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

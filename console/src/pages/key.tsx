import { useState } from 'preact/hooks'
import { get, post, type IssuedKey, type Key } from '../api.js'
import { Confirm, SecretDialog } from '../components/dialog.js'
import { Await, useLoad } from '../components/load.js'
import { Usage } from '../components/usage.js'
import { instant } from '../format.js'
import { useCan } from '../identity.js'
import { href } from '../router.js'

type Open = { dialog: 'rotate' } | { dialog: 'revoke' } | { dialog: 'secret'; key: IssuedKey } | undefined

export function KeyPage(props: { id: string }) {
  const [loaded, reload] = useLoad(() => get<Key>(`keys/${props.id}`), [props.id])
  const [open, setOpen] = useState<Open>()
  const canChange = useCan()
  const close = () => setOpen(undefined)
  return (
    <Await loaded={loaded} what="the key">
      {(key) => (
        <>
          <h1>Key {key.prefix}</h1>
          <dl class="facts">
            <dt>Prefix</dt>
            <dd>{key.prefix}</dd>
            <dt>Name</dt>
            <dd>{key.name ?? '—'}</dd>
            <dt>Account</dt>
            <dd>
              <a href={href(`/accounts/${key.accountId}`)}>{key.accountId}</a>
            </dd>
            <dt>Plan</dt>
            <dd>
              {key.plan} ({key.perMinute.toLocaleString('en')} a minute, {key.perDay.toLocaleString('en')} a day)
            </dd>
            <dt>Scopes</dt>
            <dd>{key.scopes.length === 0 ? '—' : key.scopes.join(', ')}</dd>
            <dt>Created</dt>
            <dd>{instant(key.createdAt)}</dd>
            <dt>Expires</dt>
            <dd>{instant(key.expiresAt)}</dd>
            <dt>Revoked</dt>
            <dd>{instant(key.revokedAt)}</dd>
          </dl>
          {canChange && key.revokedAt === null && (
            <div class="toolbar">
              <button type="button" onClick={() => setOpen({ dialog: 'rotate' })}>
                Rotate
              </button>
              <button type="button" class="danger" onClick={() => setOpen({ dialog: 'revoke' })}>
                Revoke
              </button>
            </div>
          )}
          <Usage path={`keys/${key.id}/usage`} subject={`key ${key.prefix}`} />
          {open?.dialog === 'rotate' && (
            <Confirm
              title={`Rotate key ${key.prefix}?`}
              action="Rotate key"
              onClose={close}
              onConfirm={async () => {
                const rotated = await post<IssuedKey>(`keys/${key.id}/rotate`)
                setOpen({ dialog: 'secret', key: rotated })
                reload()
              }}
            >
              <p>The key gets a new secret, shown once; its current secret stops working on every instance.</p>
            </Confirm>
          )}
          {open?.dialog === 'revoke' && (
            <Confirm
              title={`Revoke key ${key.prefix}?`}
              action="Revoke key"
              onClose={close}
              onConfirm={async () => {
                await post<Key>(`keys/${key.id}/revoke`)
                close()
                reload()
              }}
            >
              <p>Every instance refuses the key within a second. This cannot be undone.</p>
            </Confirm>
          )}
          {open?.dialog === 'secret' && (
            <SecretDialog title={`New secret of key ${open.key.prefix}`} secret={open.key.key} onClose={close} />
          )}
        </>
      )}
    </Await>
  )
}

import { useState } from 'preact/hooks'
import { get, patch, post, type IssuedKey, type Key, type KeyChanges, type KeyRotation } from '../api.js'
import { Confirm, Dialog, failureMessage, FormActions, SecretDialog } from '../components/dialog.js'
import { useAccessChoice } from '../components/forms.js'
import { Await, useLoad } from '../components/load.js'
import { Usage } from '../components/usage.js'
import { instant, metadataText } from '../format.js'
import { useCan } from '../identity.js'
import { href } from '../router.js'

type Open =
  { dialog: 'rotate' } | { dialog: 'revoke' } | { dialog: 'access' } | { dialog: 'secret'; key: IssuedKey } | undefined

/** How long the current secret keeps working once the key is rotated: the grace periods an operator picks from. */
const GRACE_PERIODS = [
  [0, 'stops working at once'],
  [3_600, 'keeps working for an hour'],
  [86_400, 'keeps working for a day'],
  [604_800, 'keeps working for a week']
] as const

export function KeyPage(props: { id: string }) {
  const [loaded, reload] = useLoad(() => get<Key>(`keys/${props.id}`), [props.id])
  const [open, setOpen] = useState<Open>()
  const [grace, setGrace] = useState(0)
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
              {key.plan} ({key.perMinute === null ? 'none' : key.perMinute.toLocaleString('en')} a minute,{' '}
              {key.perDay === null ? 'none' : key.perDay.toLocaleString('en')} a day)
            </dd>
            <dt>Scopes</dt>
            <dd>{key.scopes.length === 0 ? '—' : key.scopes.join(', ')}</dd>
            <dt>Created</dt>
            <dd>{instant(key.createdAt)}</dd>
            <dt>Expires</dt>
            <dd>{instant(key.expiresAt)}</dd>
            <dt>Revoked</dt>
            <dd>{instant(key.revokedAt)}</dd>
            <dt>Previous secret</dt>
            <dd>
              {key.previousPrefix === null
                ? '—'
                : `${key.previousPrefix}, works until ${instant(key.previousSecretExpiresAt)}`}
            </dd>
            <dt>Allowed addresses</dt>
            <dd>{key.allowedAddresses === null ? 'any' : key.allowedAddresses.join(', ')}</dd>
            <dt>Metadata</dt>
            <dd>{Object.keys(key.metadata).length === 0 ? '—' : <pre>{metadataText(key.metadata)}</pre>}</dd>
          </dl>
          {canChange && key.revokedAt === null && (
            <div class="toolbar">
              <button type="button" onClick={() => setOpen({ dialog: 'access' })}>
                Edit addresses and metadata
              </button>
              <button
                type="button"
                onClick={() => {
                  setGrace(0)
                  setOpen({ dialog: 'rotate' })
                }}
              >
                Rotate
              </button>
              <button type="button" class="danger" onClick={() => setOpen({ dialog: 'revoke' })}>
                Revoke
              </button>
            </div>
          )}
          <Usage path={`keys/${key.id}/usage`} subject={`key ${key.prefix}`} accountId={key.accountId} keyId={key.id} />
          {open?.dialog === 'access' && (
            <AccessDialog
              apiKey={key}
              onClose={close}
              onSaved={() => {
                close()
                reload()
              }}
            />
          )}
          {open?.dialog === 'rotate' && (
            <Confirm
              title={`Rotate key ${key.prefix}?`}
              action="Rotate key"
              onClose={close}
              onConfirm={async () => {
                const body = { graceSeconds: BigInt(grace) } satisfies KeyRotation
                const rotated = await post<IssuedKey>(`keys/${key.id}/rotate`, body)
                setOpen({ dialog: 'secret', key: rotated })
                reload()
              }}
            >
              <p>The key gets a new secret, shown once, and keeps its account, windows and usage.</p>
              <label>
                Its current secret
                <select value={grace} onChange={(event) => setGrace(Number(event.currentTarget.value))}>
                  {GRACE_PERIODS.map(([seconds, text]) => (
                    <option key={seconds} value={seconds}>
                      {text}
                    </option>
                  ))}
                </select>
              </label>
              <p class="note">
                While it keeps working, both secrets count in the same windows, so clients can move over. A secret still
                in an earlier rotation's grace stops at once.
              </p>
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

/** The addresses the key may be used from, and its metadata, each replaced whole. */
function AccessDialog(props: { apiKey: Key; onClose: () => void; onSaved: () => void }) {
  const access = useAccessChoice(props.apiKey)
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    setFailure(undefined)
    try {
      const { allowedAddresses, metadata } = access.value()
      const body = { allowedAddresses, metadata: metadata ?? {} } satisfies KeyChanges
      await patch<Key>(`keys/${props.apiKey.id}`, body)
      props.onSaved()
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title={`Addresses and metadata of key ${props.apiKey.prefix}`} onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        {access.fields}
        <FormActions failure={failure} submit="Save" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

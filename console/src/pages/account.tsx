import { useState } from 'preact/hooks'
import {
  get,
  getPage,
  patch,
  post,
  type Account,
  type CreditChange,
  type Credits,
  type IssuedKey,
  type Key,
  type OverrideInput
} from '../api.js'
import { ColumnHeads } from '../components/column-heads.js'
import { Confirm, Dialog, failureMessage, SecretDialog, FormActions } from '../components/dialog.js'
import { KeysTable } from '../components/keys-table.js'
import { Await, useLoad } from '../components/load.js'
import { Usage } from '../components/usage.js'
import { Windows } from '../components/windows.js'
import { accountName, count, instant, metadataText } from '../format.js'
import { useCan } from '../identity.js'
import { href } from '../router.js'
import { CreateKeyDialog } from './keys.js'
import { limitText } from './plans.js'

type Open =
  | { dialog: 'create-key' }
  | { dialog: 'close' }
  | { dialog: 'secret'; key: IssuedKey }
  | { dialog: 'overrides' }
  | { dialog: 'credits' }
  | undefined

export function AccountPage({ id }: { id: string }) {
  const [loaded, reload] = useLoad(() => get<Account>(`accounts/${id}`), [id])
  const [keys, reloadKeys] = useLoad(() => getPage<Key>(`accounts/${id}/keys`), [id])
  const [open, setOpen] = useState<Open>()
  const canChange = useCan()
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
            <dd>
              <a href={href('/plans')}>{account.plan}</a>
            </dd>
            <dt>Limits in force</dt>
            <dd>
              {account.perMinute === null ? 'none' : count(account.perMinute)} a minute,{' '}
              {account.perDay === null ? 'none' : count(account.perDay)} a day
            </dd>
            <dt>Credits</dt>
            <dd>{creditsText(account.credits)}</dd>
            <dt>Metadata</dt>
            <dd>{Object.keys(account.metadata).length === 0 ? '—' : <pre>{metadataText(account.metadata)}</pre>}</dd>
            <dt>Months start</dt>
            <dd>{instant(account.cycleAnchor)} and every month after (for a plan whose month follows it)</dd>
            <dt>Created</dt>
            <dd>{instant(account.createdAt)}</dd>
            <dt>Closed</dt>
            <dd>{instant(account.closedAt)}</dd>
          </dl>
          <div class="toolbar">
            <a href={href('/events', { accountId: String(account.id) })}>Events of this account</a>
            {canChange && account.closedAt === null && (
              <>
                <button type="button" onClick={() => setOpen({ dialog: 'create-key' })}>
                  Create key
                </button>
                <button type="button" onClick={() => setOpen({ dialog: 'overrides' })}>
                  Set overrides
                </button>
                <button type="button" onClick={() => setOpen({ dialog: 'credits' })}>
                  Add credits
                </button>
                <button type="button" class="danger" onClick={() => setOpen({ dialog: 'close' })}>
                  Close account
                </button>
              </>
            )}
          </div>
          <h2>Overrides</h2>
          {account.overrides.length === 0 ? (
            <p>None: the plan's limits apply.</p>
          ) : (
            <table aria-label={`Overrides of account ${accountName(account)}`}>
              <ColumnHeads names={['Window', 'Limit', 'Until']} />
              <tbody>
                {account.overrides.map((override) => (
                  <tr key={override.window}>
                    <th scope="row">{override.window}</th>
                    <td>{limitText(override)}</td>
                    <td>{override.until === null ? 'for good' : instant(override.until)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Windows accountId={account.id} subject={`account ${accountName(account)}`} />
          <h2>Keys</h2>
          <Await loaded={keys} what="the account's keys">
            {(page) => <KeysTable keys={page.items} label={`Keys of account ${accountName(account)}`} />}
          </Await>
          <Usage
            path={`accounts/${account.id}/usage`}
            subject={`account ${accountName(account)}`}
            accountId={account.id}
          />
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
          {open?.dialog === 'overrides' && (
            <OverridesDialog
              account={account}
              onClose={close}
              onSaved={() => {
                close()
                reload()
              }}
            />
          )}
          {open?.dialog === 'credits' && (
            <CreditsDialog
              account={account}
              onClose={close}
              onSaved={() => {
                close()
                reload()
              }}
            />
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

const creditsText = (credits: Credits | null) =>
  credits === null
    ? 'none'
    : `${count(credits.remaining)} remaining` +
      (credits.refill ? `, refilled to ${count(credits.refill.amount)} each ${credits.refill.every}` : '')

/** The account's overrides as JSON, replaced whole: [] removes them. */
function OverridesDialog(props: { account: Account; onClose: () => void; onSaved: () => void }) {
  const [text, setText] = useState(() =>
    JSON.stringify(
      props.account.overrides.map(({ window, algorithm, limit, burst, until }) => ({
        window,
        algorithm,
        limit,
        ...(burst === null ? {} : { burst }),
        ...(until === null ? {} : { until })
      })),
      null,
      2
    )
  )
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    let overrides: OverrideInput[]
    try {
      overrides = JSON.parse(text) as OverrideInput[]
    } catch (error) {
      setFailure(`The overrides are not JSON: ${failureMessage(error)}`)
      return
    }
    try {
      await patch<Account>(`accounts/${props.account.id}`, { overrides })
      props.onSaved()
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title={`Overrides of account ${accountName(props.account)}`} onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <label>
          Overrides (JSON: one per window, each with an optional until; [] removes them)
          <textarea rows={10} spellcheck={false} value={text} onInput={(event) => setText(event.currentTarget.value)} />
        </label>
        <FormActions failure={failure} submit="Save overrides" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

/** Adds units to the account's credits, and optionally sets their refill. */
function CreditsDialog(props: { account: Account; onClose: () => void; onSaved: () => void }) {
  const [add, setAdd] = useState('')
  const [refill, setRefill] = useState('')
  const [every, setEvery] = useState<'day' | 'month'>('month')
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    const body: CreditChange = {
      add: Number(add),
      ...(refill === '' ? {} : { refill: { amount: Number(refill), every } })
    }
    try {
      await post<Credits>(`accounts/${props.account.id}/credits`, body)
      props.onSaved()
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title={`Add credits to account ${accountName(props.account)}`} onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <label>
          Units to add
          <input type="number" min={1} required value={add} onInput={(event) => setAdd(event.currentTarget.value)} />
        </label>
        <label>
          Refill to (optional)
          <input type="number" min={1} value={refill} onInput={(event) => setRefill(event.currentTarget.value)} />
        </label>
        <label>
          Refill every
          <select value={every} onChange={(event) => setEvery(event.currentTarget.value as 'day' | 'month')}>
            <option value="day">day</option>
            <option value="month">month</option>
          </select>
        </label>
        <FormActions failure={failure} submit="Add credits" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

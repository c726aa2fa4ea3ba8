import { useState } from 'preact/hooks'
import {
  act,
  get,
  getPage,
  patch,
  post,
  WEBHOOK_EVENT_TYPES,
  type NewWebhookEndpoint,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointChanges,
  type WebhookEndpointWithSecret,
  type WebhookEventType
} from '../api.js'
import { ColumnHeads } from '../components/column-heads.js'
import { Confirm, Dialog, failureMessage, FormActions, SecretDialog } from '../components/dialog.js'
import { Await, useLoad } from '../components/load.js'
import { Pager } from '../components/pager.js'
import { count, instant } from '../format.js'
import { Allowed, useCan } from '../identity.js'
import { href, navigate } from '../router.js'

/** An endpoint's state in a word or two: paused, failing since when, or active. */
const state = (endpoint: WebhookEndpoint) =>
  endpoint.paused ? 'Paused' : endpoint.failingSince ? `Failing since ${instant(endpoint.failingSince)}` : 'Active'

const cursorPath = (path: string, cursor: string | undefined) =>
  `${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`

/** Why the last action on the page failed, if it did. */
function Failure(props: { message: string | undefined }) {
  if (props.message === undefined) return null
  return (
    <p role="alert" class="error">
      {props.message}
    </p>
  )
}

/** Every webhook endpoint with its events and state; a new one's secret is shown once. */
export function WebhooksPage(props: { query: URLSearchParams }) {
  const cursor = props.query.get('cursor') ?? undefined
  const path = cursorPath('webhooks?limit=20', cursor)
  const [loaded, reload] = useLoad(() => getPage<WebhookEndpoint>(path), [path])
  const [creating, setCreating] = useState(false)
  const [made, setMade] = useState<WebhookEndpointWithSecret>()
  return (
    <>
      <h1>Webhooks</h1>
      <p class="note">
        The events of each type an endpoint takes are POSTed to it in the order they were written, signed per Standard
        Webhooks, and retried for 24 hours. An endpoint failing for an hour is paused.
      </p>
      <Allowed role="admin">
        <div class="toolbar">
          <button type="button" onClick={() => setCreating(true)}>
            Register endpoint
          </button>
        </div>
      </Allowed>
      <Await loaded={loaded} what="the webhook endpoints">
        {(page) =>
          page.items.length === 0 ? (
            <p>No webhook endpoints.</p>
          ) : (
            <>
              <table aria-label="Webhook endpoints">
                <ColumnHeads names={['Endpoint', 'URL', 'Events', 'State', 'Description']} />
                <tbody>
                  {page.items.map((endpoint) => (
                    <tr key={String(endpoint.id)}>
                      <th scope="row">
                        <a href={href(`/webhooks/${endpoint.id}`)}>{String(endpoint.id)}</a>
                      </th>
                      <td class="url">{endpoint.url}</td>
                      <td>{endpoint.events.join(', ')}</td>
                      <td>{state(endpoint)}</td>
                      <td>{endpoint.description ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager path="/webhooks" query={{}} next={page.next} paged={cursor !== undefined} />
            </>
          )
        }
      </Await>
      {creating && (
        <CreateEndpointDialog
          onClose={() => setCreating(false)}
          onCreated={(endpoint) => {
            setCreating(false)
            setMade(endpoint)
            reload()
          }}
        />
      )}
      {made && (
        <SecretDialog
          title={`Endpoint ${made.id} registered`}
          secret={made.secret}
          onClose={() => setMade(undefined)}
        />
      )}
    </>
  )
}

function EventTypesField(props: { chosen: WebhookEventType[]; onChange: (chosen: WebhookEventType[]) => void }) {
  return (
    <fieldset>
      <legend>Events</legend>
      {WEBHOOK_EVENT_TYPES.map((type) => (
        <label key={type} class="inline">
          <input
            type="checkbox"
            checked={props.chosen.includes(type)}
            onChange={(event) =>
              props.onChange(
                event.currentTarget.checked ? [...props.chosen, type] : props.chosen.filter((name) => name !== type)
              )
            }
          />
          {type}
        </label>
      ))}
    </fieldset>
  )
}

function CreateEndpointDialog(props: {
  onClose: () => void
  onCreated: (endpoint: WebhookEndpointWithSecret) => void
}) {
  const [url, setUrl] = useState('')
  const [events, setEvents] = useState<WebhookEventType[]>([])
  const [description, setDescription] = useState('')
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    setFailure(undefined)
    try {
      const body = { url, events, description: description === '' ? undefined : description }
      props.onCreated(await post<WebhookEndpointWithSecret>('webhooks', body satisfies NewWebhookEndpoint))
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title="Register endpoint" onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <label>
          URL (https to a public address)
          <input type="url" required value={url} onInput={(event) => setUrl(event.currentTarget.value)} />
        </label>
        <EventTypesField chosen={events} onChange={setEvents} />
        <label>
          Description (optional)
          <input value={description} maxLength={255} onInput={(event) => setDescription(event.currentTarget.value)} />
        </label>
        <FormActions failure={failure} submit="Register" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

type Open =
  | { dialog: 'rotate' }
  | { dialog: 'delete' }
  | { dialog: 'events' }
  | { dialog: 'secret'; endpoint: WebhookEndpointWithSecret }
  | undefined

const STATUSES = ['pending', 'delivered', 'failed'] as const

/** One endpoint: its state and the actions on it, and its deliveries newest first. */
export function WebhookPage(props: { id: string; query: URLSearchParams }) {
  const [loaded, reload] = useLoad(() => get<WebhookEndpoint>(`webhooks/${props.id}`), [props.id])
  const [open, setOpen] = useState<Open>()
  const [failure, setFailure] = useState<string>()
  const close = () => setOpen(undefined)
  const change = async (changes: WebhookEndpointChanges) => {
    setFailure(undefined)
    try {
      await patch<WebhookEndpoint>(`webhooks/${props.id}`, changes)
      reload()
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Await loaded={loaded} what="the webhook endpoint">
      {(endpoint) => (
        <>
          <h1>Webhook endpoint {String(endpoint.id)}</h1>
          <dl class="facts">
            <dt>URL</dt>
            <dd class="url">{endpoint.url}</dd>
            <dt>Events</dt>
            <dd>{endpoint.events.join(', ')}</dd>
            <dt>State</dt>
            <dd>{state(endpoint)}</dd>
            <dt>Description</dt>
            <dd>{endpoint.description ?? '—'}</dd>
            <dt>Previous secret signs until</dt>
            <dd>{instant(endpoint.previousSecretUntil)}</dd>
            <dt>Registered</dt>
            <dd>{instant(endpoint.createdAt)}</dd>
          </dl>
          <Allowed role="admin">
            <div class="toolbar">
              <button
                type="button"
                onClick={() => {
                  void change({ paused: !endpoint.paused })
                }}
              >
                {endpoint.paused ? 'Resume' : 'Pause'}
              </button>
              <button type="button" onClick={() => setOpen({ dialog: 'events' })}>
                Change events
              </button>
              <button type="button" onClick={() => setOpen({ dialog: 'rotate' })}>
                Rotate secret
              </button>
              <button type="button" class="danger" onClick={() => setOpen({ dialog: 'delete' })}>
                Delete
              </button>
            </div>
          </Allowed>
          <Failure message={failure} />
          <Deliveries endpointId={props.id} query={props.query} />
          {open?.dialog === 'events' && (
            <EventsDialog
              endpoint={endpoint}
              onClose={close}
              onSaved={() => {
                close()
                reload()
              }}
            />
          )}
          {open?.dialog === 'rotate' && (
            <RotateSecretDialog
              endpoint={endpoint}
              onClose={close}
              onRotated={(rotated) => {
                setOpen({ dialog: 'secret', endpoint: rotated })
                reload()
              }}
            />
          )}
          {open?.dialog === 'secret' && (
            <SecretDialog
              title={`New secret of endpoint ${open.endpoint.id}`}
              secret={open.endpoint.secret}
              onClose={close}
            />
          )}
          {open?.dialog === 'delete' && (
            <Confirm
              title={`Delete endpoint ${endpoint.id}?`}
              action="Delete endpoint"
              onClose={close}
              onConfirm={async () => {
                await act(`webhooks/${endpoint.id}`, 'DELETE')
                navigate('/webhooks')
              }}
            >
              <p>The endpoint is deleted with its deliveries, sent or not. This cannot be undone.</p>
            </Confirm>
          )}
        </>
      )}
    </Await>
  )
}

function EventsDialog(props: { endpoint: WebhookEndpoint; onClose: () => void; onSaved: () => void }) {
  const [events, setEvents] = useState<WebhookEventType[]>(props.endpoint.events)
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      await patch<WebhookEndpoint>(`webhooks/${props.endpoint.id}`, { events } satisfies WebhookEndpointChanges)
      props.onSaved()
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title={`Events of endpoint ${props.endpoint.id}`} onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <EventTypesField chosen={events} onChange={setEvents} />
        <FormActions failure={failure} submit="Save events" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

function RotateSecretDialog(props: {
  endpoint: WebhookEndpoint
  onClose: () => void
  onRotated: (endpoint: WebhookEndpointWithSecret) => void
}) {
  const [grace, setGrace] = useState('86400')
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    try {
      const rotated = await post<WebhookEndpointWithSecret>(`webhooks/${props.endpoint.id}/rotate-secret`, {
        graceSeconds: BigInt(Number(grace))
      })
      props.onRotated(rotated)
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title={`Rotate the secret of endpoint ${props.endpoint.id}`} onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <p>
          The endpoint gets a new secret, shown once. During the grace both secrets sign each delivery, so the receiver
          can switch to the new one without refusing any.
        </p>
        <label>
          Grace in seconds (0 to 604,800; 0 ends the old secret now)
          <input
            type="number"
            required
            min={0}
            max={604800}
            value={grace}
            onInput={(event) => setGrace(event.currentTarget.value)}
          />
        </label>
        <FormActions failure={failure} submit="Rotate secret" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

/** A delivery's last answer: its HTTP status and the start of its body, or why none came. */
const lastAnswer = (delivery: WebhookDelivery) =>
  delivery.attempts === 0
    ? '—'
    : [delivery.lastStatus ?? 'No answer', delivery.lastResponse ?? ''].filter((part) => part !== '').join(': ')

function Deliveries(props: { endpointId: string; query: URLSearchParams }) {
  const canRetry = useCan()
  const status = props.query.get('status') ?? ''
  const cursor = props.query.get('cursor') ?? undefined
  const path = cursorPath(
    `webhooks/${props.endpointId}/deliveries?limit=50${status ? `&status=${status}` : ''}`,
    cursor
  )
  const [loaded, reload] = useLoad(() => getPage<WebhookDelivery>(path), [path])
  const [failure, setFailure] = useState<string>()
  const retry = async (delivery: WebhookDelivery) => {
    setFailure(undefined)
    try {
      await act(`webhooks/${props.endpointId}/deliveries/${delivery.eventId}/retry`)
      reload()
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <div class="toolbar">
        <div class="field">
          <label for="deliveries-status">Status</label>
          <select
            id="deliveries-status"
            value={status}
            onChange={(event) => navigate(`/webhooks/${props.endpointId}`, { status: event.currentTarget.value })}
          >
            <option value="">All</option>
            {STATUSES.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <button type="button" onClick={reload}>
          Refresh deliveries
        </button>
      </div>
      <Failure message={failure} />
      <Await loaded={loaded} what="the deliveries">
        {(page) =>
          page.items.length === 0 ? (
            <p>No deliveries{status ? ` ${status}` : ''}.</p>
          ) : (
            <>
              <table aria-label={`Deliveries to endpoint ${props.endpointId}`}>
                <ColumnHeads
                  names={['Event', 'Type', 'Status', 'Attempts', 'Next attempt', 'Last attempt', 'Last answer', '']}
                />
                <tbody>
                  {page.items.map((delivery) => (
                    <tr key={String(delivery.eventId)}>
                      <th scope="row">{`evt_${delivery.eventId}`}</th>
                      <td>{delivery.type}</td>
                      <td>{delivery.status === 'failed' ? <strong>Failed</strong> : delivery.status}</td>
                      <td>{count(delivery.attempts)}</td>
                      <td>{instant(delivery.nextAttemptAt)}</td>
                      <td>{instant(delivery.lastAttemptAt)}</td>
                      <td class="answer">{lastAnswer(delivery)}</td>
                      <td>
                        {delivery.status === 'failed' && canRetry && (
                          <button
                            type="button"
                            onClick={() => {
                              void retry(delivery)
                            }}
                          >
                            Retry evt_{String(delivery.eventId)}
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                path={`/webhooks/${props.endpointId}`}
                query={{ status: status || undefined }}
                next={page.next}
                paged={cursor !== undefined}
              />
            </>
          )
        }
      </Await>
    </section>
  )
}

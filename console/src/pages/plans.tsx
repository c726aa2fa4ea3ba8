import { useState } from 'preact/hooks'
import { get, put, type Plan, type PlanDefinition } from '../api.js'
import { ColumnHeads } from '../components/column-heads.js'
import { Dialog, failureMessage, FormActions } from '../components/dialog.js'
import { Await, useLoad } from '../components/load.js'
import { count, instant } from '../format.js'
import { Allowed, useCan } from '../identity.js'

/** A limit as one line: `60 a minute (bucket, burst 120)`. */
export const limitText = (limit: {
  window: string
  algorithm: string
  limit: number
  burst: number | null
  shadow?: boolean
}) =>
  `${count(limit.limit)} a ${limit.window}` +
  (limit.algorithm === 'bucket' ? ` (bucket${limit.burst === null ? '' : `, burst ${count(limit.burst)}`})` : '') +
  (limit.shadow ? ' (shadow)' : '')

const costsText = (costs: Record<string, number>) =>
  Object.entries(costs)
    .map(([route, cost]) => `${route}: ${cost}`)
    .join('; ') || '1 a request'

/** What PUT /plans/{name} takes, from a plan as the API shows it: the text the editor starts from. */
const definitionOf = (plan: Plan | undefined): string =>
  JSON.stringify(
    plan
      ? {
          limits: plan.limits.map(({ window, algorithm, limit, burst, shadow }) => ({
            window,
            algorithm,
            limit,
            ...(burst === null ? {} : { burst }),
            ...(shadow ? { shadow } : {})
          })),
          costs: plan.costs
        }
      : { limits: [{ window: 'minute', limit: 60 }], costs: {} },
    null,
    2
  )

/** Every plan with its limits and costs; a plan is made or replaced whole, as JSON. */
export function PlansPage() {
  const [loaded, reload] = useLoad(() => get<Plan[]>('plans'), [])
  const [editing, setEditing] = useState<{ plan: Plan | undefined }>()
  const canChange = useCan()
  return (
    <>
      <h1>Plans</h1>
      <p class="note">
        Each account on a plan follows a change on every instance within a second; an account's overrides replace its
        plan's limit for their window.
      </p>
      <Allowed>
        <div class="toolbar">
          <button type="button" onClick={() => setEditing({ plan: undefined })}>
            New plan
          </button>
        </div>
      </Allowed>
      <Await loaded={loaded} what="the plans">
        {(plans) => (
          <table aria-label="Plans">
            <ColumnHeads names={['Name', 'Limits', 'Costs', 'Updated', ...(canChange ? [''] : [])]} />
            <tbody>
              {plans.map((plan) => (
                <tr key={plan.name}>
                  <th scope="row">{plan.name}</th>
                  <td>{plan.limits.map(limitText).join('; ')}</td>
                  <td>{costsText(plan.costs)}</td>
                  <td>{instant(plan.updatedAt)}</td>
                  {canChange && (
                    <td>
                      <button type="button" onClick={() => setEditing({ plan })}>
                        Edit {plan.name}
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Await>
      {editing && (
        <PlanDialog
          plan={editing.plan}
          onClose={() => setEditing(undefined)}
          onSaved={() => {
            setEditing(undefined)
            reload()
          }}
        />
      )}
    </>
  )
}

function PlanDialog(props: { plan: Plan | undefined; onClose: () => void; onSaved: () => void }) {
  const [name, setName] = useState(props.plan?.name ?? '')
  const [definition, setDefinition] = useState(() => definitionOf(props.plan))
  const [failure, setFailure] = useState<string>()
  const submit = async (event: Event) => {
    event.preventDefault()
    let body: PlanDefinition
    try {
      body = JSON.parse(definition) as PlanDefinition
    } catch (error) {
      setFailure(`The definition is not JSON: ${failureMessage(error)}`)
      return
    }
    try {
      await put<Plan>(`plans/${encodeURIComponent(name)}`, body)
      props.onSaved()
    } catch (error) {
      setFailure(failureMessage(error))
    }
  }
  return (
    <Dialog title={props.plan ? `Edit plan ${props.plan.name}` : 'New plan'} onClose={props.onClose}>
      <form
        onSubmit={(event) => {
          void submit(event)
        }}
      >
        <label>
          Name
          <input
            required
            pattern="[a-z0-9\-]{1,40}"
            readOnly={props.plan !== undefined}
            value={name}
            onInput={(event) => setName(event.currentTarget.value)}
          />
        </label>
        <label>
          Limits and costs (JSON: 1 to 5 limits, one per window; costs by route, 0 to 1,000)
          <textarea
            required
            rows={12}
            spellcheck={false}
            value={definition}
            onInput={(event) => setDefinition(event.currentTarget.value)}
          />
        </label>
        <FormActions failure={failure} submit="Save plan" onClose={props.onClose} />
      </form>
    </Dialog>
  )
}

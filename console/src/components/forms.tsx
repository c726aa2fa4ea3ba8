import { useState } from 'preact/hooks'
import { PLANS, SCOPES, type Plan, type Scope } from '../api.js'

/** A number input's value, which the form has checked is a whole number, as the int64 the API takes. */
const wholeNumber = (value: string) => BigInt(Number(value))

/** The plan, and for enterprise its own limits: what a new key and a new account both name. */
export interface PlanChoice {
  plan: Plan
  perMinute?: bigint
  perDay?: bigint
}

export function usePlanChoice() {
  const [plan, setPlan] = useState<Plan>('free')
  const [perMinute, setPerMinute] = useState('')
  const [perDay, setPerDay] = useState('')
  const value = (): PlanChoice =>
    plan === 'enterprise' ? { plan, perMinute: wholeNumber(perMinute), perDay: wholeNumber(perDay) } : { plan }
  const fields = (
    <>
      <label>
        Plan
        <select value={plan} onChange={(event) => setPlan(event.currentTarget.value as Plan)}>
          {PLANS.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      {plan === 'enterprise' && (
        <>
          <label>
            Requests a minute
            <input
              type="number"
              min={1}
              required
              value={perMinute}
              onInput={(event) => setPerMinute(event.currentTarget.value)}
            />
          </label>
          <label>
            Requests a day
            <input
              type="number"
              min={1}
              required
              value={perDay}
              onInput={(event) => setPerDay(event.currentTarget.value)}
            />
          </label>
        </>
      )}
    </>
  )
  return { value, fields }
}

export function useScopesChoice() {
  const [chosen, setChosen] = useState<Scope[]>([...SCOPES])
  const toggle = (scope: Scope, on: boolean) =>
    setChosen((current) => (on ? [...current, scope] : current.filter((name) => name !== scope)))
  const fields = (
    <fieldset>
      <legend>Scopes</legend>
      {SCOPES.map((scope) => (
        <label key={scope} class="inline">
          <input
            type="checkbox"
            checked={chosen.includes(scope)}
            onChange={(event) => toggle(scope, event.currentTarget.checked)}
          />
          {scope}
        </label>
      ))}
    </fieldset>
  )
  return { value: () => chosen, fields }
}

/** A datetime-local value read as UTC, as its label says. */
export const utcInstant = (value: string) => (value === '' ? undefined : new Date(`${value}Z`).toISOString())

import { useState } from 'preact/hooks'
import { parseJson } from '../../../client/src/json.js'
import { DEFAULT_SCOPES, get, SCOPES, type Metadata, type Plan, type PlanName, type Scope } from '../api.js'
import { metadataText } from '../format.js'
import { useLoad } from './load.js'

/** A number input's value, which the form has checked is a whole number, as the int64 the API takes. */
const wholeNumber = (value: string) => (value === '' ? undefined : BigInt(Number(value)))

/** The plan, and optionally the account's own minute and day limits: what a new key and a new account both name. */
export interface PlanChoice {
  plan: PlanName
  perMinute?: bigint
  perDay?: bigint
}

export function usePlanChoice() {
  const [plans] = useLoad(() => get<Plan[]>('plans'), [])
  const [plan, setPlan] = useState<PlanName>('free')
  const [perMinute, setPerMinute] = useState('')
  const [perDay, setPerDay] = useState('')
  const value = (): PlanChoice => ({ plan, perMinute: wholeNumber(perMinute), perDay: wholeNumber(perDay) })
  const names = plans.state === 'done' ? plans.value.map((known) => known.name) : [plan]
  const fields = (
    <>
      <label>
        Plan
        <select value={plan} onChange={(event) => setPlan(event.currentTarget.value)}>
          {names.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Requests a minute (optional: the plan's)
        <input type="number" min={1} value={perMinute} onInput={(event) => setPerMinute(event.currentTarget.value)} />
      </label>
      <label>
        Requests a day (optional: the plan's)
        <input type="number" min={1} value={perDay} onInput={(event) => setPerDay(event.currentTarget.value)} />
      </label>
    </>
  )
  return { value, fields }
}

export function useScopesChoice() {
  const [chosen, setChosen] = useState<Scope[]>([...DEFAULT_SCOPES])
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

/** Addresses as an operator types them, separated by commas, spaces or lines; none: any address. */
const addressList = (text: string): string[] | null => {
  const addresses = text.split(/[\s,]+/).filter((address) => address !== '')
  return addresses.length === 0 ? null : addresses
}

/**
 * Metadata as an operator types it: a JSON object (the service refuses anything else, with why), empty
 * for none. Throws on text that is not JSON.
 */
function metadataInput(text: string): Metadata | undefined {
  if (text.trim() === '') return undefined
  try {
    return parseJson<Metadata>(text, new Set())
  } catch (error) {
    throw new Error(`The metadata is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** A key's allowed addresses and metadata, as the create-key dialog and the key's own take them. */
export function useAccessChoice(key?: { allowedAddresses: string[] | null; metadata: Metadata }) {
  const [addresses, setAddresses] = useState(key?.allowedAddresses?.join('\n') ?? '')
  const [metadata, setMetadata] = useState(key ? metadataText(key.metadata) : '')
  /** Throws when the metadata is not JSON. */
  const value = () => ({ allowedAddresses: addressList(addresses), metadata: metadataInput(metadata) })
  const fields = (
    <>
      <label>
        Allowed addresses (CIDR ranges or addresses, one a line or separated by commas, at most 20; empty: any)
        <textarea
          rows={3}
          spellcheck={false}
          value={addresses}
          onInput={(event) => setAddresses(event.currentTarget.value)}
        />
      </label>
      <label>
        Metadata (a JSON object of at most 2 KB; empty: none)
        <textarea
          rows={4}
          spellcheck={false}
          value={metadata}
          onInput={(event) => setMetadata(event.currentTarget.value)}
        />
      </label>
    </>
  )
  return { value, fields }
}

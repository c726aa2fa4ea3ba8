import { Type } from '@sinclair/typebox'

// The instants a client may send: RFC 3339 date-times whose UTC year is 0001 to 9999, the range a
// `date-time` response serves (toISOString writes `+010000-…` past it) and the database stores.

/** The first and last instants taken, in milliseconds since the epoch. */
export const EARLIEST_INSTANT_MS = Date.parse('0001-01-01T00:00:00.000Z')
export const LATEST_INSTANT_MS = Date.parse('9999-12-31T23:59:59.999Z')

export const INSTANT_RULE =
  'must be a real instant in RFC 3339 (2030-01-31T12:00:00Z) from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z ' +
  'in UTC, with no leap second'

const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/

/** The instant a client's text names, or undefined when it names none in the stored range. */
export function parseInstant(text: string): Date | undefined {
  const match = RFC_3339.exec(text)
  if (!match) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const [sign, offsetHours, offsetMinutes] = [match[8], Number(match[9] ?? 0), Number(match[10] ?? 0)]
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined
  // Date.UTC maps years 0 to 99 to 1900 to 1999; setUTCFullYear does not.
  const calendar = new Date(0)
  calendar.setUTCFullYear(year, month - 1, day)
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) {
    return undefined
  }
  const fraction = Math.floor(Number(`0${match[7] ?? ''}`) * 1000)
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000
  const at = calendar.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offsetMs
  return at < EARLIEST_INSTANT_MS || at > LATEST_INSTANT_MS ? undefined : new Date(at)
}

/**
 * An instant as the API sends and takes it: `date-time`, bounded on the way in by the validator
 * (validation.ts) to what parseInstant takes.
 */
export const Instant = (description?: string) =>
  Type.String({ format: 'date-time', ...(description === undefined ? {} : { description }) })

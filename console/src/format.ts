import { stringify } from 'lossless-json'
import { stringifyJson } from '../../client/src/json.js'

/** An instant as the operator reads it: UTC, to the second. */
export const instant = (value: string | null | undefined) =>
  value === null || value === undefined ? '—' : value.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')

export const count = (value: number | bigint) => value.toLocaleString('en')

/** An account by its external id, else by its own id: an account need not have an external id. */
export const accountName = (account: { id: bigint; externalId: string | null }) =>
  account.externalId ?? `#${account.id}`

const shown = (value: unknown) => (value === undefined ? '—' : stringifyJson(value))

/** An audit event's changes, one field a line: `field: before → after`. */
export const changes = (fields: Record<string, { before: unknown; after: unknown }>) =>
  Object.entries(fields).map(([field, { before, after }]) => `${field}: ${shown(before)} → ${shown(after)}`)

/** Metadata as an operator reads and edits it: indented JSON, every digit of its numbers kept. */
export const metadataText = (metadata: Record<string, unknown>) => stringify(metadata, undefined, 2) ?? '{}'

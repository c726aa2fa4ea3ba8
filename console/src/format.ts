/** An instant as the operator reads it: UTC, to the second. */
export const instant = (value: string | null | undefined) =>
  value === null || value === undefined ? '—' : value.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')

export const count = (value: number) => value.toLocaleString('en')

/** An account by its external id, else by its own id: an account need not have an external id. */
export const accountName = (account: { id: number; externalId: string | null }) =>
  account.externalId ?? `#${account.id}`

/** An audit event's changes, one field a line: `field: before → after`. */
export const changes = (fields: Record<string, { before: unknown; after: unknown }>) =>
  Object.entries(fields).map(
    ([field, { before, after }]) => `${field}: ${JSON.stringify(before) ?? '—'} → ${JSON.stringify(after) ?? '—'}`
  )

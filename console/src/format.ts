/** An instant as the operator reads it: UTC, to the second. */
export const instant = (value: string | null | undefined) =>
  value === null || value === undefined ? '—' : value.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')

export const count = (value: number) => value.toLocaleString('en')

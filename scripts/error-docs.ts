import { ERRORS } from '../src/errors.js'

export const BEGIN = '<!-- Generated from src/errors.ts by `npm run docs:errors`. Do not edit. -->'
export const END = '<!-- End of the generated table. -->'

const cell = (text: string) => text.replaceAll('|', '\\|')

/** The table of error codes as the registry in src/errors.ts holds them, one row per code. */
export function errorCodesTable(errors: Record<string, { status: number; when: string }> = ERRORS): string {
  const rows = Object.entries(errors).map(([code, { status, when }]) => `| ${status} | \`${code}\` | ${cell(when)} |`)
  return ['| HTTP | code | when |', '|---|---|---|', ...rows].join('\n')
}

/** `doc` with the text between its markers replaced by the generated table; throws without the markers. */
export function withErrorCodes(doc: string, table = errorCodesTable()): string {
  const begin = doc.indexOf(BEGIN)
  const end = doc.indexOf(END)
  if (begin === -1 || end < begin) throw new Error(`The doc has no ${BEGIN} … ${END} section`)
  return `${doc.slice(0, begin + BEGIN.length)}\n\n${table}\n\n${doc.slice(end)}`
}

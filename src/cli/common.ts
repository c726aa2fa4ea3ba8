import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { Kysely } from 'kysely'
import type { Database } from '../db/schema.js'

/** A problem with how the CLI was called: printed as one line, exit code 2. */
export class UsageError extends Error {}

export type WithDatabase = <T>(run: (db: Kysely<Database>) => Promise<T>) => Promise<T>

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean' } }, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message.split('\n')[0])
  }
}

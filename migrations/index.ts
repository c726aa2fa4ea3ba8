import type { Migration } from 'kysely'
import * as m0001 from './0001_pets.js'
import * as m0002 from './0002_api_keys.js'
import * as m0003 from './0003_rate_limits.js'
import * as m0004 from './0004_idempotency_keys.js'
import * as m0005 from './0005_rate_limit_returns.js'

// Every migration, by name; names sort in the order they run.
export const migrations: Record<string, Migration> = {
  '0001_pets': m0001,
  '0002_api_keys': m0002,
  '0003_rate_limits': m0003,
  '0004_idempotency_keys': m0004,
  '0005_rate_limit_returns': m0005
}

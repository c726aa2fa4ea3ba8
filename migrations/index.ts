import type { Migration } from 'kysely'
import * as baseline from './0028_baseline.js'
import * as m0029 from './0029_operators_by_credential.js'
import * as m0030 from './0030_key_changes_by_row.js'
import * as m0031 from './0031_counters_leave_room.js'
import * as m0032 from './0032_webhook_deliveries_announced.js'
import * as m0033 from './0033_usage_read_scope.js'
import * as m0034 from './0034_counters_one_row_per_account.js'
import * as m0035 from './0035_service_operators.js'
import * as m0036 from './0036_key_expiry_notices.js'
import * as m0037 from './0037_count_requests_left_behind.js'
import * as m0038 from './0038_previous_release_on_new_schema.js'
import * as m0039 from './0039_webhook_event_traceparent.js'
import * as m0040 from './0040_count_units_decided_per_account.js'
import * as m0041 from './0041_count_units_clock_once_locked.js'
import * as m0042 from './0042_shadow_limits.js'
import * as m0043 from './0043_account_anchored_months.js'
import * as m0044 from './0044_usage_by_route_and_hour_reports.js'
import * as m0045 from './0045_plan_limits_in_one_row.js'
import * as m0046 from './0046_count_units_decided_in_fewer_instructions.js'
import * as m0047 from './0047_hand_back_unused_leases.js'
import * as m0048 from './0048_counters_taken_in_turn.js'
import * as m0049 from './0049_credits_as_stored.js'
import * as m0050 from './0050_events_written_when_due.js'

/** The release whose migrations 0001..0028 the baseline folds: a database older than it upgrades through it. */
const FOLDED_RELEASE = '2d40fdd'

/** The migrations 0028_baseline replaces, as release 2d40fdd recorded them in kysely_migration. */
export const FOLDED = [
  '0001_pets',
  '0002_api_keys',
  '0003_rate_limits',
  '0004_idempotency_keys',
  '0005_rate_limit_returns',
  '0006_api_key_usage',
  '0007_rate_limit_counters_logged',
  '0008_idempotency_keys_without_claims',
  '0009_service_role',
  '0010_service_role_draws_pet_ids',
  '0011_count_requests_function',
  '0012_client_connection_check',
  '0013_count_requests_in_milliseconds',
  '0014_api_key_hash_notifications',
  '0015_accounts_scopes_audit_events',
  '0016_count_requests_per_account',
  '0017_hourly_usage_and_outbox',
  '0018_plans_as_data',
  '0019_count_units_on_one_clock',
  '0020_operators',
  '0021_audit_trail_appended_by_function',
  '0023_webhook_endpoints',
  '0024_webhook_deliveries',
  '0025_webhook_housekeeping',
  '0026_key_rotation_grace_allowlists_metadata',
  '0027_keys_manage_scope',
  '0028_count_units_set_based'
]

// Every migration after the baseline, by name; names sort in the order they run.
const AFTER_BASELINE: Record<string, Migration> = {
  '0029_operators_by_credential': m0029,
  '0030_key_changes_by_row': m0030,
  '0031_counters_leave_room': m0031,
  '0032_webhook_deliveries_announced': m0032,
  '0033_usage_read_scope': m0033,
  '0034_counters_one_row_per_account': m0034,
  '0035_service_operators': m0035,
  '0036_key_expiry_notices': m0036,
  '0037_count_requests_left_behind': m0037,
  '0038_previous_release_on_new_schema': m0038,
  '0039_webhook_event_traceparent': m0039,
  '0040_count_units_decided_per_account': m0040,
  '0041_count_units_clock_once_locked': m0041,
  '0042_shadow_limits': m0042,
  '0043_account_anchored_months': m0043,
  '0044_usage_by_route_and_hour_reports': m0044,
  '0045_plan_limits_in_one_row': m0045,
  '0046_count_units_decided_in_fewer_instructions': m0046,
  '0047_hand_back_unused_leases': m0047,
  '0048_counters_taken_in_turn': m0048,
  '0049_credits_as_stored': m0049,
  '0050_events_written_when_due': m0050
}

/** What an empty database runs: the baseline, then every later migration. */
export const migrations: Record<string, Migration> = { '0028_baseline': baseline, ...AFTER_BASELINE }

/**
 * One of the folded migrations, for a database that recorded some of them. Those it ran are done; one
 * it has not run cannot run any more, since its code is gone: such a database is between two releases
 * older than 2d40fdd, and only that release's migrations bring it to the baseline.
 */
function folded(name: string, executed: ReadonlySet<string>): Migration {
  return {
    async up() {
      const last = FOLDED.filter((other) => executed.has(other)).at(-1)
      throw new Error(
        `migration ${name} is folded into 0028_baseline and cannot run here: this database ran the migrations ` +
          `up to ${last} only. Upgrade it with release ${FOLDED_RELEASE} first (it runs 0001..0028), then with this one`
      )
    }
  }
}

/**
 * The migrations to offer a database that has run `executed`. Kysely's Migrator refuses a database
 * that ran a migration it is not offered, so one that ran the folded migrations is offered them
 * again, as done, in place of the baseline; any other database is offered the baseline.
 */
export function migrationsFor(executed: readonly string[]): Record<string, Migration> {
  const ran = new Set(executed)
  if (!FOLDED.some((name) => ran.has(name))) return migrations
  return { ...Object.fromEntries(FOLDED.map((name) => [name, folded(name, ran)])), ...AFTER_BASELINE }
}

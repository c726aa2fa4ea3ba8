import type { Migration } from 'kysely'
import * as m0001 from './0001_pets.js'
import * as m0002 from './0002_api_keys.js'
import * as m0003 from './0003_rate_limits.js'
import * as m0004 from './0004_idempotency_keys.js'
import * as m0005 from './0005_rate_limit_returns.js'
import * as m0006 from './0006_api_key_usage.js'
import * as m0007 from './0007_rate_limit_counters_logged.js'
import * as m0008 from './0008_idempotency_keys_without_claims.js'
import * as m0009 from './0009_service_role.js'
import * as m0010 from './0010_service_role_draws_pet_ids.js'
import * as m0011 from './0011_count_requests_function.js'
import * as m0012 from './0012_client_connection_check.js'
import * as m0013 from './0013_count_requests_in_milliseconds.js'
import * as m0014 from './0014_api_key_hash_notifications.js'
import * as m0015 from './0015_accounts_scopes_audit_events.js'
import * as m0016 from './0016_count_requests_per_account.js'
import * as m0017 from './0017_hourly_usage_and_outbox.js'
import * as m0018 from './0018_plans_as_data.js'
import * as m0019 from './0019_count_units_on_one_clock.js'
import * as m0020 from './0020_operators.js'
import * as m0021 from './0021_audit_trail_appended_by_function.js'
import * as m0023 from './0023_webhook_endpoints.js'
import * as m0024 from './0024_webhook_deliveries.js'
import * as m0025 from './0025_webhook_housekeeping.js'
import * as m0026 from './0026_key_rotation_grace_allowlists_metadata.js'
import * as m0027 from './0027_keys_manage_scope.js'
import * as m0028 from './0028_count_units_set_based.js'
import * as m0029 from './0029_operators_by_credential.js'
import * as m0030 from './0030_key_changes_by_row.js'
import * as m0031 from './0031_counters_leave_room.js'
import * as m0032 from './0032_webhook_deliveries_announced.js'
import * as m0033 from './0033_usage_read_scope.js'
import * as m0034 from './0034_counters_one_row_per_account.js'
import * as m0035 from './0035_service_operators.js'
import * as m0036 from './0036_key_expiry_notices.js'
import * as m0037 from './0037_previous_release_on_new_schema.js'

// Every migration, by name; names sort in the order they run.
export const migrations: Record<string, Migration> = {
  '0001_pets': m0001,
  '0002_api_keys': m0002,
  '0003_rate_limits': m0003,
  '0004_idempotency_keys': m0004,
  '0005_rate_limit_returns': m0005,
  '0006_api_key_usage': m0006,
  '0007_rate_limit_counters_logged': m0007,
  '0008_idempotency_keys_without_claims': m0008,
  '0009_service_role': m0009,
  '0010_service_role_draws_pet_ids': m0010,
  '0011_count_requests_function': m0011,
  '0012_client_connection_check': m0012,
  '0013_count_requests_in_milliseconds': m0013,
  '0014_api_key_hash_notifications': m0014,
  '0015_accounts_scopes_audit_events': m0015,
  '0016_count_requests_per_account': m0016,
  '0017_hourly_usage_and_outbox': m0017,
  '0018_plans_as_data': m0018,
  '0019_count_units_on_one_clock': m0019,
  '0020_operators': m0020,
  '0021_audit_trail_appended_by_function': m0021,
  '0023_webhook_endpoints': m0023,
  '0024_webhook_deliveries': m0024,
  '0025_webhook_housekeeping': m0025,
  '0026_key_rotation_grace_allowlists_metadata': m0026,
  '0027_keys_manage_scope': m0027,
  '0028_count_units_set_based': m0028,
  '0029_operators_by_credential': m0029,
  '0030_key_changes_by_row': m0030,
  '0031_counters_leave_room': m0031,
  '0032_webhook_deliveries_announced': m0032,
  '0033_usage_read_scope': m0033,
  '0034_counters_one_row_per_account': m0034,
  '0035_service_operators': m0035,
  '0036_key_expiry_notices': m0036,
  '0037_previous_release_on_new_schema': m0037
}

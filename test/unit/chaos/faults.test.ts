import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { keeperDecisions } from '../../../chaos/faults.js'

describe('keeperDecisions', () => {
  it('keeps each message about the monitor, standbys, partitions and states once, from the offset on, with its first time', () => {
    const before = '10:00:00 41 INFO  Monitor assigned new state "primary"\n'
    const log = join(mkdtempSync(join(tmpdir(), 'keeper-log-')), 'node2.log')
    writeFileSync(
      log,
      before +
        [
          '10:00:01 41 ERROR Failed to get the goal state from the monitor',
          '10:00:01 41 WARN  Checking for network partitions...',
          "10:00:01 41 WARN  We lost the monitor, but still have a standby: we're not in a network partition, continuing.",
          '10:00:01 52 LOG:  checkpoint starting: time',
          '10:00:02 41 ERROR Failed to get the goal state from the monitor',
          '10:00:02 41 WARN  Checking for network partitions...',
          '10:00:07 41 INFO  Network in not healthy, switching to state demote_timeout',
          'a line without a time'
        ].join('\n')
    )
    expect(keeperDecisions(log, Buffer.byteLength(before))).toEqual([
      '10:00:01 ERROR Failed to get the goal state from the monitor',
      '10:00:01 WARN  Checking for network partitions...',
      "10:00:01 WARN  We lost the monitor, but still have a standby: we're not in a network partition, continuing.",
      '10:00:07 INFO  Network in not healthy, switching to state demote_timeout'
    ])
  })
})

import { describe, expect, it } from 'vitest'
import { PerSecondCeiling } from '../../../src/limits/instance-ceiling.js'

const SECOND = Date.UTC(2027, 0, 1, 12) + 7_000

const admits = (ceiling: PerSecondCeiling, times: number[]) => times.map((now) => ceiling.admit(now))

describe('PerSecondCeiling', () => {
  it('admits up to its ceiling in a clock second and sheds the rest of that second', () => {
    const ceiling = new PerSecondCeiling(3)
    expect(admits(ceiling, [SECOND, SECOND + 1, SECOND + 500, SECOND + 998, SECOND + 999])).toEqual([
      true,
      true,
      true,
      false,
      false
    ])
  })

  it('starts afresh on the next clock second, however the last one ended', () => {
    const ceiling = new PerSecondCeiling(2)
    expect(admits(ceiling, [SECOND + 999, SECOND + 1_000, SECOND + 1_001, SECOND + 1_002])).toEqual([
      true,
      true,
      true,
      false
    ])
    expect(admits(ceiling, [SECOND + 2_000])).toEqual([true])
    expect(admits(ceiling, [SECOND + 5_500, SECOND + 5_600, SECOND + 5_700])).toEqual([true, true, false])
  })
})

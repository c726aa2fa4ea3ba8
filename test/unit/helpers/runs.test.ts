import { describe, expect, it } from 'vitest'
import { runOf } from '../../helpers/runs.js'

describe('runOf', () => {
  it("reads the run from each name a run gives its databases, and from no other's", () => {
    expect(runOf('test_0123456789ab_cdef01234567')).toBe('0123456789ab')
    expect(runOf('test_template_0123456789ab')).toBe('0123456789ab')
    expect(runOf('test_template_0123456789ab_building')).toBe('0123456789ab')
    for (const name of [
      'test',
      'test_0123456789ab',
      'test_0123456789ab_cdef',
      'test_shop',
      'store',
      'test_template_xyz'
    ]) {
      expect(runOf(name), name).toBeUndefined()
    }
  })
})

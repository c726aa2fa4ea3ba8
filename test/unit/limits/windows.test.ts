import { describe, expect, it } from 'vitest'
import { windowStarts } from '../../../src/limits/windows.js'

describe('windowStarts', () => {
  it('starts the minute and the day on UTC boundaries', () => {
    const now = Date.UTC(2026, 10, 25, 16, 21, 7, 250)
    expect(windowStarts(now)).toEqual({
      minuteStart: Date.UTC(2026, 10, 25, 16, 21),
      dayStart: Date.UTC(2026, 10, 25)
    })
  })
})

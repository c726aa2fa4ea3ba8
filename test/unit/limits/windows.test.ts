import { describe, expect, it } from 'vitest'
import {
  bindingWindow,
  DAY_MS,
  MINUTE_MS,
  refusingWindow,
  reportWindow,
  sameWindows,
  secondsUntil,
  usedIn,
  windowStarts,
  windowStates,
  type WindowState
} from '../../../src/limits/windows.js'

const NOW = Date.UTC(2026, 10, 25, 16, 21, 7, 250)
const MINUTE = Date.UTC(2026, 10, 25, 16, 21)
const DAY = Date.UTC(2026, 10, 25)

const window = (name: 'minute' | 'day', remaining: number, resetAt: number): WindowState => ({
  name,
  limit: 100,
  remaining,
  resetAt,
  seconds: name === 'minute' ? 60 : 86_400
})

describe('windowStarts', () => {
  it('starts the minute and the day on UTC boundaries', () => {
    expect(windowStarts(NOW)).toEqual({ minuteStart: MINUTE, dayStart: DAY })
  })

  it('puts a boundary instant in the window it starts', () => {
    expect(windowStarts(DAY)).toEqual({ minuteStart: DAY, dayStart: DAY })
    expect(windowStarts(DAY - 1)).toEqual({ minuteStart: DAY - MINUTE_MS, dayStart: DAY - DAY_MS })
  })
})

describe('sameWindows', () => {
  it('needs both the minute and the day to match', () => {
    expect(sameWindows(windowStarts(NOW), windowStarts(NOW + 1000))).toBe(true)
    expect(sameWindows(windowStarts(NOW), windowStarts(NOW + MINUTE_MS))).toBe(false)
    expect(sameWindows({ minuteStart: MINUTE, dayStart: DAY }, { minuteStart: MINUTE, dayStart: DAY - DAY_MS })).toBe(
      false
    )
  })
})

describe('windowStates', () => {
  const starts = { minuteStart: MINUTE, dayStart: DAY }

  it('gives the minute, then the day, with what is left and when each resets', () => {
    expect(windowStates({ perMinute: 60, perDay: 1000 }, starts, { minute: 10, day: 400 })).toEqual([
      { name: 'minute', limit: 60, remaining: 50, resetAt: MINUTE + MINUTE_MS, seconds: 60 },
      { name: 'day', limit: 1000, remaining: 600, resetAt: DAY + DAY_MS, seconds: 86_400 }
    ])
  })

  it('has no day window without a day limit, and never less than 0 left', () => {
    expect(windowStates({ perMinute: 5, perDay: null }, starts, { minute: 7, day: 7 })).toEqual([
      { name: 'minute', limit: 5, remaining: 0, resetAt: MINUTE + MINUTE_MS, seconds: 60 }
    ])
    expect(windowStates({ perMinute: 5, perDay: 5 }, starts, { minute: 5, day: 9 })[1]!.remaining).toBe(0)
  })
})

describe('usedIn', () => {
  const starts = { minuteStart: MINUTE, dayStart: DAY }
  const stored = (minuteStart: number, dayStart: number) => ({
    minuteStart,
    minuteUsed: 7,
    dayStart,
    dayUsed: 40
  })

  it('takes the stored counts of the current windows', () => {
    expect(usedIn(starts, stored(MINUTE, DAY))).toEqual({ minute: 7, day: 40 })
  })

  it('counts 0 in a window whose stored start is behind the current one, or without a stored row', () => {
    expect(usedIn(starts, stored(MINUTE - MINUTE_MS, DAY))).toEqual({ minute: 0, day: 40 })
    expect(usedIn(starts, stored(MINUTE - 1, DAY - 1))).toEqual({ minute: 0, day: 0 })
    expect(usedIn(starts, undefined)).toEqual({ minute: 0, day: 0 })
  })
})

describe('reportWindow', () => {
  it('reports what was used and the reset in whole Unix seconds, rounded up', () => {
    expect(reportWindow({ ...window('minute', 58, MINUTE + MINUTE_MS), limit: 60 })).toEqual({
      name: 'minute',
      limit: 60,
      used: 2,
      remaining: 58,
      reset: (MINUTE + MINUTE_MS) / 1000
    })
    expect(reportWindow(window('day', 0, NOW + 1)).reset).toBe(Math.floor(NOW / 1000) + 1)
  })
})

describe('bindingWindow', () => {
  it('is the window with the fewest requests left', () => {
    const minute = window('minute', 5, MINUTE + MINUTE_MS)
    const day = window('day', 3, DAY + DAY_MS)
    expect(bindingWindow([minute, day])).toBe(day)
    expect(bindingWindow([day, minute])).toBe(day)
  })

  it('on a tie, is the one that resets first', () => {
    const minute = window('minute', 3, MINUTE + MINUTE_MS)
    const day = window('day', 3, DAY + DAY_MS)
    expect(bindingWindow([minute, day])).toBe(minute)
    expect(bindingWindow([day, minute])).toBe(minute)
  })
})

describe('refusingWindow', () => {
  it('among spent windows, is the one that resets last', () => {
    const minute = window('minute', 0, MINUTE + MINUTE_MS)
    const day = window('day', 0, DAY + DAY_MS)
    expect(refusingWindow([minute, day])).toBe(day)
    expect(refusingWindow([day, minute])).toBe(day)
  })

  it('is the spent one even when another resets later', () => {
    const minute = window('minute', 0, MINUTE + MINUTE_MS)
    const day = window('day', 4, DAY + DAY_MS)
    expect(refusingWindow([minute, day])).toBe(minute)
  })

  it('without a spent window, is the binding one', () => {
    const minute = window('minute', 2, MINUTE + MINUTE_MS)
    const day = window('day', 4, DAY + DAY_MS)
    expect(refusingWindow([day, minute])).toBe(minute)
  })
})

describe('secondsUntil', () => {
  it('rounds up to whole seconds, and is at least 1', () => {
    expect(secondsUntil(NOW + 1001, NOW)).toBe(2)
    expect(secondsUntil(NOW + 1000, NOW)).toBe(1)
    expect(secondsUntil(NOW + 59_000, NOW)).toBe(59)
    expect(secondsUntil(NOW, NOW)).toBe(1)
    expect(secondsUntil(NOW - 5000, NOW)).toBe(1)
  })
})

import { describe, expect, it } from 'vitest'
import type { LimitWindow } from '../../../src/db/schema.js'
import {
  bindingWindow,
  hourStart,
  lessRemaining,
  refusingWindow,
  reportWindow,
  reportWindows,
  secondsUntil,
  WINDOW_SECONDS,
  type WindowState
} from '../../../src/limits/windows.js'

const NOW = Date.UTC(2026, 10, 25, 16, 21, 7, 250)
const MINUTE_END = Date.UTC(2026, 10, 25, 16, 22)
const DAY_END = Date.UTC(2026, 10, 26)

const window = (name: LimitWindow, remaining: number, resetAt: number, limit = 100): WindowState => ({
  name,
  algorithm: 'fixed',
  limit,
  remaining,
  resetAt
})

describe('hourStart', () => {
  it('is the start of the UTC hour, a boundary instant starting its own', () => {
    expect(hourStart(NOW)).toBe(Date.UTC(2026, 10, 25, 16))
    expect(hourStart(Date.UTC(2026, 10, 25, 16))).toBe(Date.UTC(2026, 10, 25, 16))
    expect(hourStart(Date.UTC(2026, 10, 25, 16) - 1)).toBe(Date.UTC(2026, 10, 25, 15))
  })
})

describe('WINDOW_SECONDS', () => {
  it('gives each window its length in seconds, a month as 30 days', () => {
    expect(WINDOW_SECONDS).toEqual({ second: 1, minute: 60, hour: 3_600, day: 86_400, month: 30 * 86_400 })
  })
})

describe('reportWindow', () => {
  it('reports its algorithm, what was used and the reset in whole Unix seconds, rounded up', () => {
    expect(reportWindow(window('minute', 58, MINUTE_END, 60), false)).toEqual({
      name: 'minute',
      algorithm: 'fixed',
      shadow: false,
      limit: 60,
      used: 2,
      remaining: 58,
      reset: MINUTE_END / 1000
    })
    expect(reportWindow(window('day', 0, NOW + 1), false).reset).toBe(Math.floor(NOW / 1000) + 1)
  })

  it('reports a bucket as a bucket, refilled when it is full again', () => {
    const bucket: WindowState = { name: 'second', algorithm: 'bucket', limit: 10, remaining: 7, resetAt: NOW + 300 }
    expect(reportWindow(bucket, false)).toEqual({
      name: 'second',
      algorithm: 'bucket',
      shadow: false,
      limit: 10,
      used: 3,
      remaining: 7,
      reset: Math.ceil((NOW + 300) / 1000)
    })
  })

  it('reports a shadow window past its limit as all it counted, with 0 left', () => {
    expect(reportWindow(window('minute', -2, MINUTE_END, 3), true)).toEqual({
      name: 'minute',
      algorithm: 'fixed',
      shadow: true,
      limit: 3,
      used: 5,
      remaining: 0,
      reset: MINUTE_END / 1000
    })
  })
})

describe('reportWindows', () => {
  it('reports the enforced windows first, then the shadow ones, each marked', () => {
    const reported = reportWindows([window('minute', 8, MINUTE_END, 10)], [window('minute', 1, MINUTE_END, 3)])
    expect(reported.map(({ name, shadow, limit, remaining }) => ({ name, shadow, limit, remaining }))).toEqual([
      { name: 'minute', shadow: false, limit: 10, remaining: 8 },
      { name: 'minute', shadow: true, limit: 3, remaining: 1 }
    ])
  })
})

describe('bindingWindow', () => {
  it('is the window with the fewest units left', () => {
    const minute = window('minute', 5, MINUTE_END)
    const day = window('day', 3, DAY_END)
    expect(bindingWindow([minute, day])).toBe(day)
    expect(bindingWindow([day, minute])).toBe(day)
  })

  it('on a tie, is the one that resets first', () => {
    const minute = window('minute', 3, MINUTE_END)
    const day = window('day', 3, DAY_END)
    expect(bindingWindow([minute, day])).toBe(minute)
    expect(bindingWindow([day, minute])).toBe(minute)
  })

  it('is the only window when there is one', () => {
    const second = window('second', 9, NOW + 750)
    expect(bindingWindow([second])).toBe(second)
  })
})

describe('refusingWindow', () => {
  it('among spent windows, is the one that resets last', () => {
    const minute = window('minute', 0, MINUTE_END)
    const day = window('day', 0, DAY_END)
    expect(refusingWindow([minute, day])).toBe(day)
    expect(refusingWindow([day, minute])).toBe(day)
  })

  it('is the spent one even when another resets later', () => {
    const minute = window('minute', 0, MINUTE_END)
    const day = window('day', 4, DAY_END)
    expect(refusingWindow([minute, day])).toBe(minute)
  })

  it('without a spent window, is the binding one', () => {
    const minute = window('minute', 2, MINUTE_END)
    const day = window('day', 4, DAY_END)
    expect(refusingWindow([day, minute])).toBe(minute)
  })

  it('with a cost, takes the windows with less than the cost left as spent', () => {
    const minute = window('minute', 4, MINUTE_END)
    const day = window('day', 6, DAY_END)
    // A request of 5 units finds the minute short, though it has units left; a day with 6 has room.
    expect(refusingWindow([minute, day], 5)).toBe(minute)
    expect(refusingWindow([day, minute], 5)).toBe(minute)
    // Of 7 units both are short: the retry waits for the day.
    expect(refusingWindow([minute, day], 7)).toBe(day)
    // Exactly the cost left is room enough: of a minute with 5 and a day with 3, the day refuses 5.
    const roomy = window('minute', 5, MINUTE_END)
    const short = window('day', 3, DAY_END)
    expect(refusingWindow([roomy, short], 5)).toBe(short)
    expect(refusingWindow([roomy, window('day', 5, DAY_END)], 5)).toBe(roomy)
  })

  it('takes a free request (cost 0) as needing a unit, as the default cost does', () => {
    const minute = window('minute', 0, MINUTE_END)
    const day = window('day', 0, DAY_END)
    expect(refusingWindow([minute, day], 0)).toBe(day)
    expect(refusingWindow([day, minute], 0)).toBe(day)
    expect(refusingWindow([minute, window('day', 1, DAY_END)], 0)).toBe(minute)
  })
})

describe('lessRemaining', () => {
  it('takes the units used from every window, never below 0, leaving the windows given untouched', () => {
    const windows = [window('minute', 3, MINUTE_END), window('day', 40, DAY_END)]
    expect(lessRemaining(windows, 5)).toEqual([window('minute', 0, MINUTE_END), window('day', 35, DAY_END)])
    expect(windows).toEqual([window('minute', 3, MINUTE_END), window('day', 40, DAY_END)])
  })

  it('adds units back for a negative use (a lease counted but not used), and copies the list for none', () => {
    const windows = [window('minute', 3, MINUTE_END)]
    expect(lessRemaining(windows, -4)).toEqual([window('minute', 7, MINUTE_END)])
    const same = lessRemaining(windows, 0)
    expect(same).toEqual(windows)
    expect(same).not.toBe(windows)
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

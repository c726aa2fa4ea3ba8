import { expect, it } from 'vitest'
import { parseLimit } from '../../../src/cli/common.js'

it.each([
  ['minute=60', { window: 'minute', limit: 60 }],
  ['minute=60:bucket:120', { window: 'minute', limit: 60, algorithm: 'bucket', burst: 120 }],
  ['month=20000:account', { window: 'month', limit: 20000, anchor: 'account' }],
  ['minute=30:shadow', { window: 'minute', limit: 30, shadow: true }],
  ['minute=60:bucket:120:shadow', { window: 'minute', limit: 60, algorithm: 'bucket', burst: 120, shadow: true }],
  ['month=1000:account:shadow', { window: 'month', limit: 1000, anchor: 'account', shadow: true }]
])('reads --limit %s', (text, limit) => {
  expect(parseLimit(text)).toEqual(limit)
})

it.each([
  'month=5:bucket:account',
  'month=5:calendar',
  'month=5:account:1',
  'minute=5:shadow:bucket',
  'minute=5:shadow:shadow'
])('refuses --limit %s', (text) => {
  expect(() => parseLimit(text)).toThrow(
    '--limit must read WINDOW=N[:bucket[:BURST]][:shadow] or month=N:account[:shadow]'
  )
})

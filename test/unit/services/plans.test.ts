import { expect, it } from 'vitest'
import { checkLimits, checkPlanDefinitions, describeLimit } from '../../../src/services/plans.js'

// A limit's anchor: where its month starts.
it('takes a month on the calendar unless it is anchored on the account, and shows the anchor only then', () => {
  const limits = checkLimits(
    [
      { window: 'month', limit: 100, anchor: 'account' },
      { window: 'day', limit: 10 }
    ],
    'limits',
    1
  )
  expect(limits.map((limit) => [limit.window, limit.anchor])).toEqual([
    ['day', 'calendar'],
    ['month', 'account']
  ])
  expect(limits.map(describeLimit)).toEqual([
    { window: 'day', algorithm: 'fixed', limit: 10, burst: null },
    { window: 'month', algorithm: 'fixed', limit: 100, burst: null, anchor: 'account' }
  ])
})

it.each([
  [{ window: 'day', limit: 5, anchor: 'account' }, 'limits[0].anchor account is for a fixed month'],
  [
    { window: 'month', limit: 5, algorithm: 'bucket', anchor: 'account' },
    'limits[0].anchor account is for a fixed month'
  ],
  [{ window: 'month', limit: 5, anchor: 'billing' }, "limits[0].anchor must be calendar or account, not 'billing'"]
])('refuses %j', (limit, message) => {
  expect(() => checkLimits([limit], 'limits', 1)).toThrow(message)
})

it('reads an anchor in a plans file', () => {
  const [plan] = checkPlanDefinitions([{ name: 'billed', limits: [{ window: 'month', limit: 9, anchor: 'account' }] }])
  expect(plan!.limits).toEqual([
    { window: 'month', algorithm: 'fixed', limit: 9, burst: null, shadow: false, anchor: 'account' }
  ])
})

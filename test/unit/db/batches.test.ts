import { AsyncLocalStorage } from 'node:async_hooks'
import { describe, expect, it } from 'vitest'
import { Batches } from '../../../src/db/batches.js'

/** Which request's context each statement ran in, as a trace's parent would be read from it. */
const request = new AsyncLocalStorage<string>()

describe('Batches', () => {
  it('runs items that fall due during a statement together in the next, in the context of the first of them', async () => {
    const statements: { items: string[]; context: string | undefined }[] = []
    let finishFirst = () => {}
    const batches = new Batches<string, string>(
      async (items) => {
        statements.push({ items, context: request.getStore() })
        if (statements.length === 1) await new Promise<void>((resolve) => (finishFirst = resolve))
        return items.map((item) => item.toUpperCase())
      },
      10,
      () => new Error('full')
    )
    const first = request.run('first', () => batches.add('a'))
    await expect.poll(() => statements.length).toBe(1)
    const second = request.run('second', () => batches.add('b'))
    const third = request.run('third', () => batches.add('c'))
    finishFirst()

    expect(await Promise.all([first, second, third])).toEqual(['A', 'B', 'C'])
    expect(statements).toEqual([
      { items: ['a'], context: 'first' },
      { items: ['b', 'c'], context: 'second' }
    ])
  })

  it('fails an item at once when maxDue wait already', async () => {
    const batches = new Batches<number, number>(
      async (items) => items,
      1,
      () => new Error('full')
    )
    const waiting = batches.add(1)
    await expect(batches.add(2)).rejects.toThrow('full')
    expect(await waiting).toBe(1)
  })
})

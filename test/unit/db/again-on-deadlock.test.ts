import { expect, it } from 'vitest'
import { againOnDeadlock } from '../../../src/db/statements.js'

const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' })

/** A statement that fails with the given errors in turn, then answers `done`. */
function failing(...errors: Error[]) {
  let runs = 0
  return {
    run: async () => {
      const error = errors[runs++]
      if (error) throw error
      return 'done'
    },
    get runs() {
      return runs
    }
  }
}

it('runs a statement that lost a deadlock again, up to three runs in all', async () => {
  const twice = failing(deadlock(), deadlock())
  await expect(againOnDeadlock(twice.run)).resolves.toBe('done')
  expect(twice.runs).toBe(3)

  const always = failing(deadlock(), deadlock(), deadlock())
  await expect(againOnDeadlock(always.run)).rejects.toMatchObject({ code: '40P01' })
  expect(always.runs).toBe(3)
})

it('fails at once on any other error', async () => {
  const other = failing(Object.assign(new Error('unique violation'), { code: '23505' }))
  await expect(againOnDeadlock(other.run)).rejects.toMatchObject({ code: '23505' })
  expect(other.runs).toBe(1)
})

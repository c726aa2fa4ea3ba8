import { chmod, cp, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listeningOrigin, ROOT, startProcess, waitFor, type RunningProcess } from '../harness/processes.js'

// A fresh checkout of the sources (no dist/, no .data/) sharing this one's node_modules.
let checkout: string
beforeAll(async () => {
  checkout = await mkdtemp(join(tmpdir(), 'animal-store-checkout-'))
  await chmod(checkout, 0o755)
  for (const entry of ['src', 'migrations', 'scripts', 'console', 'client', 'package.json', 'package-lock.json']) {
    await cp(join(ROOT, entry), join(checkout, entry), { recursive: true })
  }
  for (const config of ['tsconfig.json', 'tsconfig.build.json']) await cp(join(ROOT, config), join(checkout, config))
  await symlink(join(ROOT, 'node_modules'), join(checkout, 'node_modules'))
})
afterAll(async () => {
  await rm(checkout, { recursive: true, force: true })
})

it('npm start twice at once from one fresh checkout gives two healthy instances on one embedded database', async () => {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    // Ports the system chooses, read from the log: a port picked before a start that builds first was
    // taken by something else by the time the instance bound it, in one CI run.
    PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    // Not shed, which is not what this test is about: @fastify/under-pressure reads a second with no
    // event-loop sample (start-up held the loop throughout, as it can on a loaded machine) as an
    // infinite delay, and /v1 answers 503 for the next second. One full run beside other load got a 503 here.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0'
  }
  const instances: RunningProcess[] = [0, 1].map(() =>
    startProcess('npm', ['start'], env, { cwd: checkout, group: true })
  )
  try {
    // Both build (or find the build current), share one embedded cluster, and serve.
    const origins = await Promise.all(
      instances.map(async (instance) => {
        const origin = await listeningOrigin(instance, 60_000)
        await waitFor(`${origin}/health/ready`, instance)
        return origin
      })
    )
    for (const origin of origins) {
      const response = await fetch(`${origin}/v1/pets`)
      expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 401 })
    }
  } finally {
    // The second first: the instance that started the embedded cluster stops it.
    for (const instance of [...instances].reverse()) await instance.stop('SIGTERM')
  }
  for (const instance of instances) {
    expect(instance.stderr()).not.toMatch(/does not provide an export|Start-up failed|Error/)
  }
}, 120_000)

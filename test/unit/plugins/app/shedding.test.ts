import type { IncomingMessage, Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { loadConfig } from '../../../../src/config.js'
import { ApiError } from '../../../../src/errors.js'
import {
  PerSecondCeiling,
  ShedHold,
  shedAtSocket,
  UnkeyedCeiling,
  unkeyedCeiling
} from '../../../../src/plugins/app/shedding.js'

const SECOND = Date.UTC(2027, 0, 1, 12) + 7_000

const admits = (ceiling: PerSecondCeiling, times: number[]) => times.map((now) => ceiling.admit(now))

describe('PerSecondCeiling', () => {
  it('admits a tenth of a second of its ceiling at once, then one more each time one is due', () => {
    const ceiling = new PerSecondCeiling(30)
    expect(ceiling.burst).toBe(3)
    expect(admits(ceiling, [SECOND, SECOND, SECOND, SECOND])).toEqual([true, true, true, false])
    // One request's worth every 33.3 ms.
    expect(admits(ceiling, [SECOND + 33, SECOND + 34, SECOND + 35])).toEqual([false, true, false])
    expect(admits(ceiling, [SECOND + 67, SECOND + 68])).toEqual([true, false])
  })

  it('admits its ceiling in a second, evenly, however the requests come', () => {
    const ceiling = new PerSecondCeiling(1_000)
    let admitted = 0
    // A request every 0.25 ms for 10 s, four times what the ceiling admits.
    for (let i = 0; i < 40_000; i++) if (ceiling.admit(SECOND + i / 4)) admitted++
    // The first burst plus 1,000 a second.
    expect(admitted).toBe(100 + 10_000 - 1)
  })

  it('fills up to its burst and no further while idle', () => {
    const ceiling = new PerSecondCeiling(100)
    expect(admits(ceiling, Array(11).fill(SECOND))).toEqual([...Array(10).fill(true), false])
    expect(admits(ceiling, Array(11).fill(SECOND + 60_000))).toEqual([...Array(10).fill(true), false])
  })

  it('admits at least one request, however low its ceiling', () => {
    const ceiling = new PerSecondCeiling(1)
    expect(ceiling.burst).toBe(1)
    expect(admits(ceiling, [SECOND, SECOND + 500, SECOND + 999, SECOND + 1_000])).toEqual([true, false, false, true])
  })

  it('refills nothing while the clock steps back', () => {
    const ceiling = new PerSecondCeiling(10)
    expect(admits(ceiling, [SECOND, SECOND])).toEqual([true, false])
    expect(admits(ceiling, [SECOND - 5_000, SECOND + 50])).toEqual([false, false])
    expect(admits(ceiling, [SECOND + 100])).toEqual([true])
  })
})

describe('ShedHold', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  const record = (hold: ShedHold, sent: string[], name: string) => hold.hold(() => sent.push(name))

  it('sends each answer after the hold, a random share of it between half and all', () => {
    const shares = [1, 0, 0.5]
    const hold = new ShedHold(1_000, 10, () => shares.shift()!)
    const sent: string[] = []
    for (const name of ['a', 'b', 'c']) record(hold, sent, name)
    expect(hold.held).toBe(3)
    vi.advanceTimersByTime(499)
    expect(sent).toEqual([])
    vi.advanceTimersByTime(1)
    expect(sent).toEqual(['b'])
    vi.advanceTimersByTime(249)
    expect(sent).toEqual(['b'])
    vi.advanceTimersByTime(1)
    expect(sent).toEqual(['b', 'c'])
    vi.advanceTimersByTime(249)
    expect(sent).toEqual(['b', 'c'])
    vi.advanceTimersByTime(1)
    expect(sent).toEqual(['b', 'c', 'a'])
    expect(hold.held).toBe(0)
  })

  it('spreads answers held together over the second half of the hold', () => {
    const hold = new ShedHold(1_000, 1_000)
    const sentAt: number[] = []
    for (let i = 0; i < 1_000; i++) hold.hold(() => sentAt.push(Date.now()))
    const start = Date.now()
    vi.advanceTimersByTime(1_000)
    const tenths = [0, 0, 0, 0, 0]
    for (const at of sentAt) tenths[Math.min(4, Math.floor((at - start - 500) / 100))]!++
    expect(sentAt).toHaveLength(1_000)
    // About 200 in each tenth of a second from 0.5 s to 1 s.
    for (const count of tenths) expect(count).toBeGreaterThan(120)
  })

  it('sends at once past its maximum, and holds again once there is room', () => {
    const hold = new ShedHold(1_000, 2)
    const sent: string[] = []
    for (const name of ['a', 'b', 'c', 'd']) record(hold, sent, name)
    expect(sent).toEqual(['c', 'd'])
    expect(hold.held).toBe(2)
    vi.advanceTimersByTime(1_000)
    expect(sent.toSorted()).toEqual(['a', 'b', 'c', 'd'])
    record(hold, sent, 'e')
    expect(hold.held).toBe(1)
  })

  it('sends at once when the hold is 0', () => {
    const sent: string[] = []
    record(new ShedHold(0, 10), sent, 'a')
    expect(sent).toEqual(['a'])
  })

  it('sends everything held when released, and holds nothing afterwards', () => {
    const hold = new ShedHold(1_000, 10)
    const sent: string[] = []
    record(hold, sent, 'a')
    record(hold, sent, 'b')
    hold.release()
    expect(sent).toEqual(['a', 'b'])
    record(hold, sent, 'c')
    expect(sent).toEqual(['a', 'b', 'c'])
    expect(hold.held).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
  })
})

describe('UnkeyedCeiling', () => {
  it('lets a request it admits pass, and fails one it sheds with the 429 once the hold is over', async () => {
    vi.useFakeTimers()
    try {
      const ceiling = new UnkeyedCeiling(1, () => SECOND, new ShedHold(1_000, 10, () => 1))
      await expect(ceiling.pass({} as IncomingMessage)).resolves.toBeUndefined()
      let refusal: unknown
      const shed = ceiling.pass({} as IncomingMessage).catch((error: unknown) => (refusal = error))
      await vi.advanceTimersByTimeAsync(999)
      expect(refusal).toBeUndefined()
      expect(ceiling.held).toBe(1)
      await vi.advanceTimersByTimeAsync(1)
      await shed
      expect(refusal).toBeInstanceOf(ApiError)
      expect(refusal).toMatchObject({
        statusCode: 429,
        code: 'rate_limited',
        message: 'Too many requests without a valid API key; retry in 1 s',
        headers: { 'retry-after': '1' }
      })
      expect(ceiling.shed).toBe(1)
    } finally {
      vi.useRealTimers()
    }
  })

  it('counts a request once, however often it is asked about, and counts what it sheds', () => {
    const ceiling = new UnkeyedCeiling(10, () => SECOND, new ShedHold(0, 0))
    const first = {} as IncomingMessage
    expect(ceiling.admit(first)).toBe(true)
    expect(ceiling.admit(first)).toBe(true)
    const others = Array.from({ length: 3 }, () => ({}) as IncomingMessage)
    expect(others.map((request) => ceiling.admit(request))).toEqual([false, false, false])
    // Asked again, the same answers, and nothing counted twice.
    expect(ceiling.admit(first)).toBe(true)
    expect(ceiling.admit(others[0]!)).toBe(false)
    expect(ceiling.shed).toBe(3)
  })
})

describe('shedAtSocket', () => {
  /** A server from the factory whose ceiling admits nothing: what it sheds says "shed", the rest "routed". */
  async function serve(options: Record<string, unknown> = {}) {
    const ceiling = new UnkeyedCeiling(1, () => SECOND, new ShedHold(0, 0))
    ceiling.admit({} as IncomingMessage)
    const factory = shedAtSocket(ceiling, '/v1', (_request, response) => response.end('shed'))
    const server = factory((_request, response) => response.end('routed'), options)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const ask = async (path: string, headers: Record<string, string> = {}) =>
      (await fetch(`http://127.0.0.1:${port}${path}`, { headers })).text()
    return { server, ceiling, ask }
  }

  it('sheds past the ceiling only requests under /v1 that carry no Authorization header', async () => {
    const { server, ceiling, ask } = await serve()
    try {
      expect(await ask('/v1/pets')).toBe('shed')
      expect(await ask('/v1')).toBe('shed')
      expect(await ask('/v1?limit=1')).toBe('shed')
      expect(await ask('/v1/pets', { authorization: 'Bearer anything' })).toBe('routed')
      expect(await ask('/v10/pets')).toBe('routed')
      expect(await ask('/health/ready')).toBe('routed')
      expect(ceiling.shed).toBe(3)
    } finally {
      server.close()
    }
  })

  it("takes Fastify's timeouts and HTTP options as Fastify would", async () => {
    const { server } = await serve({
      keepAliveTimeout: 7_000,
      requestTimeout: 8_000,
      connectionTimeout: 9_000,
      http: { maxHeaderSize: 4_096 }
    })
    try {
      expect(server.keepAliveTimeout).toBe(7_000)
      expect(server.requestTimeout).toBe(8_000)
      expect(server.timeout).toBe(9_000)
      // Node keeps the option on the server without declaring it.
      expect((server as Server & { maxHeaderSize?: number }).maxHeaderSize).toBe(4_096)
    } finally {
      server.close()
    }
  })
})

describe('unkeyedCeiling', () => {
  it("makes the configured ceiling's server, whose shed answer is the guard's 429 with the API's headers", async () => {
    const config = loadConfig({ UNAUTHENTICATED_PER_SECOND: '1', SHED_HOLD_MS: '0', TRUST_PROXY: '127.0.0.1' })
    const { ceiling, serverFactory } = unkeyedCeiling(config, () => SECOND, '/v1')
    const server = serverFactory((_request, response) => response.end('routed'), {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const ask = () => fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { 'x-request-id': 'flood-1' } })
      expect(await (await ask()).text()).toBe('routed')
      const shed = await ask()
      expect(shed.status).toBe(429)
      expect(await shed.json()).toEqual({
        code: 'rate_limited',
        message: 'Too many requests without a valid API key; retry in 1 s',
        status: 429
      })
      expect(shed.headers.get('retry-after')).toBe('1')
      expect(shed.headers.get('cache-control')).toBe('no-store')
      expect(shed.headers.get('content-type')).toBe('application/json; charset=utf-8')
      expect(shed.headers.get('x-content-type-options')).toBe('nosniff')
      expect(shed.headers.get('content-security-policy')).toContain("default-src 'none'")
      // The request id of a peer TRUST_PROXY trusts is kept, as on every other answer.
      expect(shed.headers.get('x-request-id')).toBe('flood-1')
      expect(ceiling.shed).toBe(1)
    } finally {
      server.close()
    }
  })
})

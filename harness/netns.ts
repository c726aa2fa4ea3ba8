// Network namespaces on one bridge, for partitions: each namespace has an address of its own on a
// veth pair whose other end is on the bridge; the host reaches every namespace through the bridge's
// addresses. A partition is a blackhole route inside a namespace (its packets to the addresses cut
// off are dropped: its own connections fail, and others' connections to it never hear back), or a
// blackhole policy rule on the host (the host's packets from one of its addresses to a namespace are
// dropped: the namespace's connections to that address time out). Needs root (CAP_NET_ADMIN) and
// `ip` from iproute2.
import { execFile } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'

const IP = '/usr/sbin/ip'

function ip(args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile(IP, args, { timeout: 10_000 }, (error, stdout, stderr) =>
      error ? fail(new Error(`ip ${args.join(' ')}: ${stderr.trim() || error.message}`)) : done(stdout)
    )
  })
}

export interface Namespace {
  name: string
  /** Its address on the bridge. */
  address: string
  /** The command line that runs `command` inside the namespace (`ip netns exec`, which execs it). */
  wrap(command: string, args: string[]): [string, string[]]
  /** Drops every packet from this namespace to `addresses`. */
  cut(addresses: string[]): Promise<void>
  /** Removes the routes `cut` added. */
  heal(): Promise<void>
  /** The blackhole routes in place, as `ip route` lists them. */
  blackholes(): Promise<string[]>
}

export interface Network {
  /** The host's address on the bridge: what the namespaces reach the host's programs at. */
  host: string
  /** A second host address, for the database path alone: a namespace can lose it and keep `host`. */
  databasePath: string
  add(label: string): Promise<Namespace>
  /**
   * Drops, on the host, every packet the host sends from `from` to `to` (a policy rule): a program
   * in `to`'s namespace that connects to `from` waits and times out, as on a broken network, while
   * the host's other addresses still reach it. Returns what undoes it.
   */
  drop(from: string, to: string): Promise<() => Promise<void>>
  /** The policy rules `drop` added and has not undone, as `ip rule` lists them. */
  drops(): Promise<string[]>
  stop(): Promise<void>
}

/**
 * A bridge with two host addresses in 10.231.N.0/24 (N from this process's id, so that two runs on
 * one machine do not share a subnet) and namespaces added on it from .10 up.
 */
export async function startNetwork(): Promise<Network> {
  const tag = `as${process.pid % 100_000}`
  const subnet = `10.231.${process.pid % 250}`
  const bridge = `${tag}br`
  const namespaces: string[] = []
  const rules = new Set<string>()
  const network: Network = {
    host: `${subnet}.1`,
    databasePath: `${subnet}.2`,
    async add(label) {
      const index = namespaces.length
      const name = `${tag}-${label}`
      const address = `${subnet}.${10 + index}`
      const [outside, inside] = [`${tag}h${index}`, `${tag}n${index}`]
      await ip(['netns', 'add', name])
      namespaces.push(name)
      // `ip netns exec` mounts /etc/netns/<name>/resolv.conf over /etc/resolv.conf: a name server
      // the namespace cannot reach would make every lookup wait for its timeout; this one refuses at once.
      await mkdir(`/etc/netns/${name}`, { recursive: true })
      await writeFile(`/etc/netns/${name}/resolv.conf`, 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n')
      await ip(['link', 'add', outside, 'type', 'veth', 'peer', 'name', inside])
      await ip(['link', 'set', outside, 'master', bridge, 'up'])
      await ip(['link', 'set', inside, 'netns', name])
      await ip(['-n', name, 'addr', 'add', `${address}/24`, 'dev', inside])
      await ip(['-n', name, 'link', 'set', inside, 'up'])
      await ip(['-n', name, 'link', 'set', 'lo', 'up'])
      await ip(['-n', name, 'route', 'add', 'default', 'via', network.host])
      let cut: string[] = []
      return {
        name,
        address,
        wrap: (command, args) => [IP, ['netns', 'exec', name, command, ...args]],
        async cut(addresses) {
          for (const target of addresses) {
            await ip(['-n', name, 'route', 'add', 'blackhole', `${target}/32`])
            cut.push(target)
          }
        },
        async heal() {
          for (const target of cut) await ip(['-n', name, 'route', 'del', 'blackhole', `${target}/32`]).catch(() => '')
          cut = []
        },
        async blackholes() {
          return (await ip(['-n', name, 'route', 'show', 'type', 'blackhole'])).split('\n').filter(Boolean)
        }
      }
    },
    async drop(from, to) {
      const rule = ['from', from, 'to', to, 'blackhole']
      await ip(['rule', 'add', ...rule])
      const key = rule.join(' ')
      rules.add(key)
      return async () => {
        if (rules.delete(key)) await ip(['rule', 'del', ...rule]).catch(() => '')
      }
    },
    async drops() {
      return (await ip(['rule', 'show'])).split('\n').filter((line) => line.includes(`from ${network.databasePath}`))
    },
    async stop() {
      for (const key of [...rules]) await ip(['rule', 'del', ...key.split(' ')]).catch(() => '')
      rules.clear()
      // Deleting a namespace deletes the veth pair whose end it holds.
      for (const name of namespaces.splice(0)) {
        await ip(['netns', 'del', name]).catch(() => '')
        await rm(`/etc/netns/${name}`, { recursive: true, force: true })
      }
      await ip(['link', 'del', bridge]).catch(() => '')
    }
  }
  try {
    await ip(['link', 'add', bridge, 'type', 'bridge'])
    await ip(['addr', 'add', `${network.host}/24`, 'dev', bridge])
    await ip(['addr', 'add', `${network.databasePath}/24`, 'dev', bridge])
    await ip(['link', 'set', bridge, 'up'])
  } catch (error) {
    await network.stop()
    throw error
  }
  return network
}

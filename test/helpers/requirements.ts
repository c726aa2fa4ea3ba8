import { existsSync } from 'node:fs'
import { describe } from 'vitest'
import { TOOLS, type Tool } from '../../harness/programs.js'

/**
 * `describe` for a suite that needs programs from Debian's packages. Where one is missing the suite
 * is skipped, and says so in one line naming the package to install; under CI=true a missing
 * program fails the suite instead, so CI cannot pass by skipping.
 */
export function describeWith(...tools: Tool[]): typeof describe {
  return describeNeeding(tools.map((tool) => TOOLS[tool]))
}

/**
 * `describeWith` for programs given by path and package.
 * @public for test/exit-codes.test.ts, whose generated suite imports it by path.
 */
export function describeNeeding(programs: { path: string; package: string }[]): typeof describe {
  const missing = programs.filter((program) => !existsSync(program.path)).map((program) => program.package)
  if (missing.length === 0) return describe
  const install = `apt-get install -y ${missing.join(' ')}`
  if (process.env.CI === 'true') {
    return ((name: string) =>
      describe(name, () => {
        throw new Error(`needs ${missing.join(', ')} (${install}); CI=true does not skip`)
      })) as unknown as typeof describe
  }
  return ((name: string, ...rest: unknown[]) => {
    process.stderr.write(`SKIPPED "${name}": needs ${missing.join(', ')} (${install})\n`)
    return (describe.skip as (...args: unknown[]) => void)(name, ...rest)
  }) as unknown as typeof describe
}

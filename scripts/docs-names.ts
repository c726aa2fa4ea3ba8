// The docs check: every name a reference doc (README.md, docs/**/*.md) puts in a code span must exist
// in today's tree. What it reads each kind of name from, one function per source:
//   tables, SQL functions  schemaNames(): CREATE and DROP in the migrations' up(), in file order
//   environment variables  Object.keys(ConfigSchema.properties) in src/config.ts, else any file of the tree
//   npm packages           packageNames(): package.json and the workspaces' (names, dependencies)
//   repository paths       git ls-files, else git check-ignore (build output, local data)
//   error codes            errorCodes(): the registry, ERRORS in src/errors.ts
// Pages under docs/history/ record the past and are not checked. A reference doc may name something
// the code does not have (an alternative it chose against) after declaring it in that doc:
// <!-- not in the code: @fastify/helmet -->
import { execFileSync } from 'node:child_process'
import { readFileSync, realpathSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { basename, join } from 'node:path'
import { fromMarkdown } from 'mdast-util-from-markdown'
import ignore from 'ignore'
import { globSync } from 'tinyglobby'
import { ConfigSchema } from '../src/config.js'
import { ERROR_CODES } from '../src/errors.js'

/** Where the schema is read from: each file's statements run in path order (a baseline sorts first). */
export const SCHEMA_FILES = ['migrations/**/*.ts', 'migrations/**/*.sql']
/** History pages: the past, named as it was. */
export const HISTORY = 'docs/history/'

/** The Migrator's own bookkeeping tables, which no migration creates. */
const MIGRATOR_TABLES = ['kysely_migration', 'kysely_migration_lock']
/** PostgreSQL's own functions the docs name; any pg_* is PostgreSQL's too. */
const POSTGRES_FUNCTIONS = new Set([
  'array_agg',
  'clock_timestamp',
  'current_setting',
  'date_trunc',
  'gen_random_uuid',
  'make_interval',
  'set_config',
  'statement_timestamp',
  'string_agg',
  'transaction_timestamp'
])
const PATH_EXTENSIONS = /\.(ts|tsx|js|mjs|cjs|json|jsonl|md|sql|yml|yaml|lua|svg|ini|conf|csv|html|sh)$/

export interface SchemaNames {
  tables: Set<string>
  functions: Set<string>
  /** Tables and functions a migration made and a later one dropped. */
  dropped: Set<string>
}

export interface Names extends SchemaNames {
  environment: Set<string>
  packages: Set<string>
  errorCodes: Set<string>
  /** Tracked files, by path. */
  files: Set<string>
  /** Whether a path that is not tracked is one git ignores (build output, local data). */
  isIgnored: (path: string) => boolean
  /** Words of the tracked files other than Markdown: names of things the tree uses besides the service. */
  treeWords: Set<string>
}

export interface Finding {
  file: string
  line: number
  name: string
  problem: string
}

/**
 * The files of the tree: tracked, or new and not ignored. A copy outside its own git work tree (the
 * mutation run's sandbox) is read from the file system, without what is built or installed.
 */
export function trackedFiles(root: string, pathspecs: string[] = []): string[] {
  if (!isWorkTreeRoot(root)) {
    const patterns = pathspecs.length > 0 ? pathspecs : ['**']
    const ignored = gitignore(root)
    return globSync(patterns, { cwd: root, dot: true, ignore: ['**/node_modules/**', '.git/**'] })
      .filter((file) => !ignored.ignores(file))
      .sort()
  }
  const globs = pathspecs.map((spec) => `:(glob)${spec}`)
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...globs], {
    cwd: root,
    encoding: 'utf8'
  })
  return [...new Set(listed.split('\0').filter(Boolean))].sort()
}

/** The tree's .gitignore, read as git reads it. */
function gitignore(root: string) {
  return ignore().add(readFileSync(join(root, '.gitignore'), 'utf8'))
}

function isWorkTreeRoot(root: string): boolean {
  try {
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore']
    })
    return realpathSync(top.trim()) === realpathSync(root)
  } catch {
    return false
  }
}

const IDENTIFIER = String.raw`(?:"?public"?\.)?"?([a-z_][a-z0-9_]*)"?`
const SCHEMA_STATEMENT = new RegExp(
  [
    String.raw`\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:UNLOGGED|TEMP|TEMPORARY)\s+)?(TABLE|FUNCTION|VIEW|MATERIALIZED\s+VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?${IDENTIFIER}`,
    String.raw`\bDROP\s+(TABLE|FUNCTION|VIEW|MATERIALIZED\s+VIEW)\s+(?:IF\s+EXISTS\s+)?([^;\x60]+)`,
    String.raw`\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?${IDENTIFIER}\s+RENAME\s+TO\s+${IDENTIFIER}`,
    String.raw`\b(createTable|createView|dropTable|dropView)\(\s*'([a-z_][a-z0-9_]*)'`
  ].join('|'),
  'g'
)

/**
 * The tables and functions a database migrated to the head has: the CREATE, DROP and RENAME statements
 * of every migration's up() (a .ts file's text before its down(), a .sql file whole), in path order.
 * A DROP FUNCTION drops the name, whatever overload it names.
 */
export function schemaNames(root: string, files = trackedFiles(root, SCHEMA_FILES)): SchemaNames {
  const tables = new Set<string>()
  const functions = new Set<string>()
  const made = new Set<string>()
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8')
    const up = file.endsWith('.ts') ? text.split(/^export\s+async\s+function\s+down\b/m)[0]! : text
    for (const match of up.matchAll(SCHEMA_STATEMENT)) {
      const [, createKind, created, dropKind, dropList, renamed, renamedTo, builderCall, builderName] = match
      if (createKind && created) {
        ;(createKind === 'FUNCTION' ? functions : tables).add(created)
        made.add(created)
      } else if (dropKind && dropList) {
        for (const name of droppedNames(dropKind, dropList)) (dropKind === 'FUNCTION' ? functions : tables).delete(name)
      } else if (renamed && renamedTo) {
        tables.delete(renamed)
        tables.add(renamedTo)
        made.add(renamedTo)
      } else if (builderCall && builderName) {
        if (builderCall.startsWith('create')) {
          tables.add(builderName)
          made.add(builderName)
        } else tables.delete(builderName)
      }
    }
  }
  const dropped = new Set([...made].filter((name) => !tables.has(name) && !functions.has(name)))
  return { tables, functions, dropped }
}

// `DROP FUNCTION a(int), b(text)` or `DROP TABLE a, b CASCADE`.
function droppedNames(kind: string, list: string): string[] {
  if (kind === 'FUNCTION') {
    return [...list.matchAll(/(?:^|,)\s*(?:"?public"?\.)?"?([a-z_][a-z0-9_]*)"?\s*(?=\(|,|$)/g)].map((m) => m[1]!)
  }
  return list
    .replace(/\b(CASCADE|RESTRICT)\b/g, '')
    .split(',')
    .map((name) =>
      name
        .trim()
        .replace(/^"?public"?\./, '')
        .replaceAll('"', '')
    )
    .filter((name) => /^[a-z_][a-z0-9_]*$/.test(name))
}

/** The error codes the service answers with: its registry's. */
export function errorCodes(): Set<string> {
  return new Set(ERROR_CODES)
}

interface PackageJson {
  name?: string
  workspaces?: string[]
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  overrides?: Record<string, unknown>
}

/** The packages the tree names: its own and its workspaces' names, dependencies of every kind and overrides. */
export function packageNames(root: string): Set<string> {
  const read = (folder: string) => JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as PackageJson
  const top = read('.')
  const names = new Set<string>()
  for (const manifest of [top, ...(top.workspaces ?? []).map(read)]) {
    if (manifest.name) names.add(manifest.name)
    for (const field of [
      manifest.dependencies,
      manifest.devDependencies,
      manifest.optionalDependencies,
      manifest.peerDependencies,
      manifest.overrides
    ]) {
      for (const name of Object.keys(field ?? {})) names.add(name)
    }
  }
  return names
}

/** Every name the docs may use, read from the tree at `root`. */
export function loadNames(root: string): Names {
  const schema = schemaNames(root)
  const files = trackedFiles(root)
  const treeWords = new Set<string>()
  for (const file of files) {
    if (/\.(md|png|jpe?g|gif|ico|woff2?)$/.test(file) || file === 'package-lock.json') continue
    for (const word of readFileSync(join(root, file), 'utf8').match(/[A-Za-z_][\w.-]*/g) ?? []) {
      // `process.env.FLOOD_SECONDS` names FLOOD_SECONDS; `report.json` is a file name.
      treeWords.add(word)
      for (const part of word.split('.')) treeWords.add(part)
    }
  }
  const ignored = gitignore(root)
  return {
    ...schema,
    tables: new Set([...schema.tables, ...MIGRATOR_TABLES]),
    environment: new Set(Object.keys(ConfigSchema.properties)),
    packages: packageNames(root),
    errorCodes: errorCodes(),
    files: new Set(files),
    // As a file, as a folder (`.data/`), or as the folder of ignored files (`bench/results/*`).
    isIgnored: (path) => [path, `${path}/`, `${path}/file`].some((name) => ignored.ignores(name)),
    treeWords
  }
}

interface MarkdownNode {
  type: string
  value?: string
  children?: MarkdownNode[]
  position?: { start: { line: number } }
}

/** Where a code span stands: the text right before and after it, and its line. */
interface Span {
  value: string
  before: string
  after: string
  /** The span just before it, when only spaces part them (`403` `insufficient_scope`). */
  previousSpan: string | undefined
  line: string
}

const SNAKE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/
const STATUS = /^[45]\d\d$/

/** The names a doc puts in code spans that do not exist in `names`; none in a history page. */
export function checkDoc(file: string, text: string, names: Names): Finding[] {
  if (file.startsWith(HISTORY)) return []
  const lines = text.split('\n')
  const declared = new Set<string>()
  const findings: Finding[] = []
  const visit = (node: MarkdownNode) => {
    if (node.type === 'html') {
      const marker = /^<!--\s*not in the code:\s*([\s\S]*?)\s*-->$/.exec(node.value ?? '')
      for (const name of marker?.[1]?.split(/[\s,]+/).filter(Boolean) ?? []) declared.add(name)
    }
    const children = node.children ?? []
    children.forEach((child, index) => {
      if (child.type !== 'inlineCode') return visit(child)
      const lineNumber = child.position!.start.line
      const textAt = (offset: number) => {
        const sibling = children[index + offset]
        return sibling?.type === 'text' ? sibling.value! : ''
      }
      const twoBack = children[index - 2]
      const span: Span = {
        value: child.value!.replace(/\s+/g, ' ').trim(),
        before: textAt(-1),
        after: textAt(1),
        previousSpan: twoBack?.type === 'inlineCode' && /^\s*$/.test(textAt(-1)) ? twoBack.value : undefined,
        line: lines[lineNumber - 1] ?? ''
      }
      for (const [name, problem] of spanProblems(span, names)) findings.push({ file, line: lineNumber, name, problem })
    })
  }
  visit(fromMarkdown(text))
  return findings.filter((finding) => !declared.has(finding.name))
}

/** Each name in one code span that does not exist, with what is wrong with it. */
function spanProblems(span: Span, names: Names): Array<[string, string]> {
  const { value } = span
  const problems: Array<[string, string]> = []
  const path = repositoryPath(value)
  if (path !== undefined) {
    if (!pathExists(path, names)) problems.push([value, 'no such file or folder in the repository'])
    return problems
  }
  for (const name of value.match(/(?<![\w.:/-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-])/g) ?? []) {
    if (names.dropped.has(name)) problems.push([name, 'dropped by a migration: no longer in the schema'])
  }
  if (problems.length) return problems

  problems.push(...environmentProblems(value, names))
  problems.push(...packageProblems(value, names))
  problems.push(...sqlProblems(value, names))

  const bare = /^([a-z][a-z0-9_]*)(?:\.[a-z_]+)?$/.exec(value)?.[1]
  if (bare !== undefined && SNAKE.test(bare)) {
    // The `x` table, the table `x`.
    const called = (noun: string) =>
      new RegExp(`\\b${noun}s? $`, 'i').test(span.before) || new RegExp(`^ ${noun}s?\\b`, 'i').test(span.after)
    if (isErrorCodeContext(span)) {
      if (!names.errorCodes.has(bare)) problems.push([bare, 'no such error code in src/errors.ts'])
    } else if (called('table') && !names.tables.has(bare) && !bare.startsWith('pg_')) {
      problems.push([bare, 'no such table in the migrations'])
    } else if (called('function') && !names.functions.has(bare) && !isPostgresFunction(bare)) {
      problems.push([bare, 'no such SQL function in the migrations'])
    }
  }
  const coded = /^([45]\d\d) ([a-z][a-z0-9_]*)$/.exec(value)
  if (coded && !names.errorCodes.has(coded[2]!)) problems.push([coded[2]!, 'no such error code in src/errors.ts'])
  return problems
}

// An error code stands after its status (409 `account_exists`, `403` `insufficient_scope`), or in
// the code column of a table whose first column is the status.
function isErrorCodeContext(span: Span): boolean {
  if (/\b[45]\d\d\s+$/.test(span.before) || (span.previousSpan && STATUS.test(span.previousSpan))) return true
  const cells = span.line.split(/(?<!\\)\|/)
  return cells.length > 3 && STATUS.test(cells[1]!.trim()) && cells[2]!.includes(`\`${span.value}\``)
}

const isPostgresFunction = (name: string) => name.startsWith('pg_') || POSTGRES_FUNCTIONS.has(name)

function environmentProblems(value: string, names: Names): Array<[string, string]> {
  const known = (name: string) => names.environment.has(name) || names.treeWords.has(name)
  let candidates: string[] = []
  const assignments = /^(?:[A-Z][A-Z0-9_]*=\S*\s*)+/.exec(value)
  if (assignments) candidates = [...assignments[0].matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!)
  else if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?::[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)?$/.test(value)) {
    candidates = value.split(':')
  } else if (/^[A-Z][A-Z0-9]*_\*$/.test(value)) {
    const prefix = value.slice(0, -1)
    const any = [...names.environment, ...names.treeWords].some((name) => name.startsWith(prefix))
    return any ? [] : [[value, 'no environment variable starts so']]
  }
  return candidates
    .filter((name) => !known(name))
    .map((name) => [name, 'no such environment variable: not in src/config.ts, nor named by any file of the tree'])
}

// Only a scoped name is surely a package: a bare word may be a Debian package, a command or a header.
function packageProblems(value: string, names: Names): Array<[string, string]> {
  if (/^node:[a-z_/]+$/.test(value)) {
    return builtinModules.includes(value.slice(5)) ? [] : [[value, 'no such Node.js module']]
  }
  if (!/^@[a-z0-9][\w.-]*\/[\w.-]+$/.test(value) || names.packages.has(value)) return []
  return [[value, 'not a dependency in package.json']]
}

function sqlProblems(value: string, names: Names): Array<[string, string]> {
  const problems: Array<[string, string]> = []
  for (const [, name] of value.matchAll(/(?<![\w.$])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\(/g)) {
    if (!names.functions.has(name!) && !isPostgresFunction(name!)) {
      problems.push([name!, 'no such SQL function in the migrations, nor a PostgreSQL one'])
    }
  }
  if (/^(SELECT|UPDATE|INSERT|DELETE|VACUUM|WITH)\b/.test(value)) {
    for (const [, name] of value.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE|VACUUM)\s+([a-z][a-z0-9_]*)\b(?!\()/g)) {
      if (!names.tables.has(name!) && !name!.startsWith('pg_')) {
        problems.push([name!, 'no such table in the migrations'])
      }
    }
  }
  return problems
}

/** The path a span names in the repository, if it names one: a relative path with a slash, or a file name. */
function repositoryPath(value: string): string | undefined {
  if (/[\s<>{}?=…|,;'"()[\]$]/.test(value)) return undefined
  if (/^(\/|#|@|~|node:|[a-z]+:\/\/)/.test(value)) return undefined
  // An OTLP protocol (`http/json`), a media type, an address range, an extension alone.
  if (/^http\/(json|protobuf)$/.test(value)) return undefined
  if (/^(application|text|image|multipart)\//.test(value) || /^[\d:][\w.:]*\/\d{1,3}$/.test(value)) return undefined
  if (/^\.[a-z]+$/.test(value)) return undefined
  const path = value.replace(/:\d+(-\d+)?$/, '').replace(/#.*$/, '')
  if (path.includes('/') || PATH_EXTENSIONS.test(path)) return path
  return undefined
}

function pathExists(path: string, names: Names): boolean {
  const bare = path.replace(/^\.\//, '').replace(/\/$/, '')
  if (bare.includes('*')) {
    // `**/` any folders deep (none included), `*` within one name.
    const pattern = bare
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .split('**/')
      .map((part) => part.replaceAll('*', '[^/]*'))
      .join('(?:.*/)?')
    const glob = new RegExp(`^${pattern}$`)
    return [...names.files].some((file) => glob.test(file))
  }
  if (names.files.has(bare)) return true
  if ([...names.files].some((file) => file.startsWith(`${bare}/`) || file.endsWith(`/${bare}`))) return true
  if (!bare.includes('/')) {
    return (
      [...names.files].some((file) => basename(file) === bare) || names.treeWords.has(bare) || names.isIgnored(bare)
    )
  }
  return names.isIgnored(bare)
}

/** The Markdown files the check reads: the README and every doc, history pages left out. */
export function referenceDocs(root: string): string[] {
  return trackedFiles(root, ['README.md', 'docs/**/*.md']).filter((file) => !file.startsWith(HISTORY))
}

export function checkDocs(root: string, files = referenceDocs(root), names = loadNames(root)): Finding[] {
  return files.flatMap((file) => checkDoc(file, readFileSync(join(root, file), 'utf8'), names))
}

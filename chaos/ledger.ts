import { createWriteStream, readFileSync, type WriteStream } from 'node:fs'

/** The rate-limit headers a response carried, as received. */
export const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
  'retry-after'
] as const

export interface LedgerPet {
  id: string
  name: string
  categoryId: string
  status: string | null
}

/** One request as the client saw it: one line of ledger.jsonl. */
export interface LedgerEntry {
  /** Its line number in the ledger, from 1. */
  line: number
  sentAt: number
  answeredAt: number
  /** The instance that answered (from nginx's upstream address), null when none did. */
  instance: string | null
  /** How many instances nginx tried (it tries the next when one fails before answering); 1 usually. */
  upstreams?: number
  method: string
  path: string
  /** The key's prefix: never the secret. */
  key: string
  idempotencyKey: string | null
  /** 1 for a first attempt, 2 for its first retry, and so on. */
  attempt: number
  /** 0 when no response came: `error` says why. */
  status: number
  error?: 'timeout' | 'network'
  headers: Partial<Record<(typeof RATE_LIMIT_HEADERS)[number], string>>
  /** The Error body's `code`, for a 4xx or 5xx. */
  code?: string
  /** The Error body's `message`, for a 5xx. */
  message?: string
  /** The pet of a 201. */
  pet?: LedgerPet
}

/** Appends every request to ledger.jsonl as it is answered, and keeps them for the checker. */
export class Ledger {
  readonly entries: LedgerEntry[] = []
  private readonly file: WriteStream

  constructor(path: string) {
    this.file = createWriteStream(path)
  }

  record(entry: Omit<LedgerEntry, 'line'>): LedgerEntry {
    const line = { line: this.entries.length + 1, ...entry }
    this.entries.push(line)
    this.file.write(`${JSON.stringify(line)}\n`)
    return line
  }

  close(): Promise<void> {
    return new Promise((done) => this.file.end(done))
  }
}

export function readLedger(path: string): LedgerEntry[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LedgerEntry)
}

/** A ledger line as the checker prints it. */
export const describeEntry = (entry: LedgerEntry) => JSON.stringify(entry)

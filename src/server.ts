import { favourMemoryWhenIdle } from './v8-flags.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { scrubSecrets } from './logging.js'

function readConfig(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`)
      process.exit(1)
    }
    throw error
  }
}

async function main() {
  favourMemoryWhenIdle()
  const config = readConfig()
  // Tracing patches pg as pg loads, so it starts before the modules that import pg; without an
  // endpoint it is never loaded.
  const tracing =
    config.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : (await import('./tracing.js')).startTracing(config)
  const { serve } = await import('./serve.js')
  await serve(config, { tracing })
}

main().catch((error) => {
  process.stderr.write(`Start-up failed: ${scrubSecrets(error instanceof Error ? error.message : String(error))}\n`)
  process.exit(1)
})

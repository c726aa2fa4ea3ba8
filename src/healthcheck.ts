import { loadConfig } from './config.js'

// The image's HEALTHCHECK: exits 0 when this container's instance reports ready, 1 otherwise.
const config = loadConfig()
const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST
const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.PORT}/health/ready`

fetch(url, { signal: AbortSignal.timeout(config.DATABASE_TIMEOUT_MS + 1000) }).then(
  (response) => process.exit(response.ok ? 0 : 1),
  () => process.exit(1)
)

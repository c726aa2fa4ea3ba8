import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsync } from 'fastify'
import { notFound } from '../errors.js'

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8'
}

/** The package's root, found from this module whether it runs from src/ or from dist/src/. */
function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(folder, 'package.json'))) folder = dirname(folder)
  return folder
}

/** dist/console as scripts/build.mjs leaves it: the page, and assets whose names carry their content hash. */
function readConsole(folder = join(packageRoot(), 'dist', 'console')) {
  if (!existsSync(join(folder, 'index.html'))) return undefined
  const page = readFileSync(join(folder, 'index.html'))
  const assets = new Map(
    readdirSync(join(folder, 'assets')).map((name) => [name, readFileSync(join(folder, 'assets', name))] as const)
  )
  return { page, assets }
}

/**
 * The operator console at /admin/: a page and its bundled assets, held in memory and served without
 * the admin token, since they hold no data; the page's own calls to /admin/v1 carry the token. Its
 * assets never change under a name, so browsers may keep them for a year. /favicon.ico is answered
 * with no icon.
 */
const adminConsole: FastifyPluginAsync = async (app) => {
  // Every browser asks for it: no icon, said once a day rather than as a 404 on every page.
  app.get('/favicon.ico', { config: { cacheable: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.code(204).header('cache-control', 'public, max-age=86400').send()
  )
  const built = readConsole()
  if (!built) {
    app.log.warn('the admin console is not built (npm run build): /admin/ answers 404')
    return
  }
  const config = { console: true }
  app.get('/admin', { config, schema: { hide: true } }, async (_request, reply) => reply.redirect('/admin/', 308))
  app.get('/admin/', { config, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(built.page)
  )
  app.get<{ Params: { name: string } }>(
    '/admin/assets/:name',
    { config, schema: { hide: true } },
    async (request, reply) => {
      const asset = built.assets.get(request.params.name)
      if (!asset) throw notFound('No such asset')
      return reply
        .type(TYPES[extname(request.params.name)] ?? 'application/octet-stream')
        .header('cache-control', 'public, max-age=31536000, immutable')
        .send(asset)
    }
  )
}

export default adminConsole

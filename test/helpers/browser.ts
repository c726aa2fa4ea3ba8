import axe from 'axe-core'
import { chromium, type Browser, type Page } from 'playwright-core'
import { TOOLS } from '../../harness/programs.js'

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync'
]

/** Debian's Chromium, driven by playwright-core: no browser of its own is downloaded. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: TOOLS.chromium.path, args: CHROMIUM_ARGS })

/**
 * A browser context that reaches 127.0.0.1 only and records what went wrong in its pages: requests
 * blocked or failed, Content-Security-Policy violations, errors the page's scripts threw or logged
 * (not the browser's own line for each answer of 400 and above, which a test asserts itself).
 */
export async function watchedContext(browser: Browser, options: Parameters<Browser['newContext']>[0] = {}) {
  const context = await browser.newContext(options)
  const problems: string[] = []
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (url.protocol === 'data:' || url.hostname === '127.0.0.1') return route.continue()
    problems.push(`blocked ${url.href}`)
    return route.abort('internetdisconnected')
  })
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) =>
      console.error('CSP violation: ' + event.effectiveDirective + ' ' + event.blockedURI))`
  })
  const watch = (page: Page) => {
    page.on('console', (message) => {
      const text = message.text()
      if (message.type() === 'error' && !text.startsWith('Failed to load resource')) problems.push(`console: ${text}`)
    })
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('requestfailed', (request) => problems.push(`failed ${request.url()}`))
  }
  context.on('page', watch)
  return { context, problems }
}

/** axe-core's serious and critical violations on the page as it stands, each as "rule: target". */
export async function seriousAccessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol, which the page's policy against inline scripts does not govern.
  await page.evaluate(axe.source)
  return page.evaluate(async () => {
    const { violations } = await (
      globalThis as unknown as {
        axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> }
      }
    ).axe.run()
    return violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .flatMap((violation) => violation.nodes.map((node) => `${violation.id}: ${node.target.join(' ')}`))
  })
}

// Sums CI's test runs into the closing line `Tests: N passed, N failed` and fails on anything but a clean
// pass. Each problem counts as one failure, so the total reads "0 failed" exactly when CI passes: a failed
// test, a file that failed outside its tests, a skipped or todo test, a report with no tests or none at
// all, an exit status that is not 0, and each step named with --failed-step (typecheck, lint).
// Usage: node .ci/check-report.mjs [--failed-step NAME]... [LABEL EXIT_STATUS REPORT.json]...
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  options: { 'failed-step': { type: 'string', multiple: true, default: [] } },
  allowPositionals: true
})

/** The problems of one run, from its vitest JSON report and the exit status of `npm test`. */
function checkRun(file, exitStatus) {
  let report
  try {
    report = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    return { passed: 0, problems: [`no readable report (${error.message.split('\n')[0]})`] }
  }
  const problems = []
  for (const result of report.testResults) {
    const failedTests = result.assertionResults.filter((test) => test.status === 'failed')
    if (result.status === 'failed' && (result.message || failedTests.length === 0)) {
      problems.push(`failed file: ${result.name}${result.message ? ` (${result.message.split('\n')[0]})` : ''}`)
    }
    for (const test of result.assertionResults) {
      if (test.status !== 'passed') problems.push(`${test.status} test: ${test.fullName}`)
    }
  }
  if (report.numTotalTests === 0) problems.push('the report holds no tests')
  if (!report.success && problems.length === 0) problems.push('vitest reported the run as unsuccessful')
  if (exitStatus !== '0' && problems.length === 0) problems.push(`npm test exited with ${exitStatus}`)
  return { passed: report.numPassedTests, problems }
}

let passed = 0
let failed = 0
for (const step of values['failed-step']) {
  console.log(`failed step: ${step}`)
  failed += 1
}
for (let i = 0; i < positionals.length; i += 3) {
  const [label, exitStatus, file] = positionals.slice(i, i + 3)
  const run = checkRun(file, exitStatus)
  for (const problem of run.problems) console.log(`  ${problem}`)
  console.log(`${label}: ${run.passed} passed, ${run.problems.length} failed`)
  passed += run.passed
  failed += run.problems.length
}
console.log(`Tests: ${passed} passed, ${failed} failed`)
process.exitCode = failed ? 1 : 0

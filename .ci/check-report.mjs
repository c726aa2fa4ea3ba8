// Reads a vitest JSON report and fails on anything but a clean pass: a failed file (an error outside
// any test counts), a failed test, a skipped or todo test, or a report with no tests at all.
// Usage: node .ci/check-report.mjs REPORT.json LABEL
import { readFileSync } from 'node:fs'

const [file, label] = process.argv.slice(2)
const report = JSON.parse(readFileSync(file, 'utf8'))
const problems = []
for (const result of report.testResults) {
  if (result.status === 'failed') {
    problems.push(`failed file: ${result.name}${result.message ? ` (${result.message.split('\n')[0]})` : ''}`)
  }
  for (const test of result.assertionResults) {
    if (test.status === 'failed') problems.push(`failed test: ${test.fullName}`)
    else if (test.status !== 'passed') problems.push(`${test.status} test: ${test.fullName}`)
  }
}
if (report.numTotalTests === 0) problems.push('the report holds no tests')
if (!report.success && problems.length === 0) problems.push('vitest reported the run as unsuccessful')

console.log(`Tests (${label}): ${report.numPassedTests} passed, ${report.numFailedTests} failed`)
for (const problem of problems) console.log(`  ${problem}`)
process.exitCode = problems.length ? 1 : 0

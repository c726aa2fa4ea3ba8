import { defineConfig } from 'vitest/config'
import { unitProject } from './vitest.config.js'

// The unit project alone: what `npm run test:mutation` (Stryker) runs against each mutant.
export default defineConfig(unitProject)

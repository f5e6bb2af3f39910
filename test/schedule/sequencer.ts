import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { EXPECTED_SECONDS } from './expected-seconds.js';
import { longestFirst } from './longest-first.js';

/**
 * vitest's sequencer with the longest files first in every tier group (longest-first.ts says why). The
 * base one orders by the results cache, which a fresh clone (CI) does not have: there it left the tiers'
 * longest files to start wherever the glob put them, several of them last.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const scheduled = files.map((spec) => {
      const file = relative(root, spec.moduleId);
      const lastMs = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      return { spec, file, group: spec.project.config.sequence.groupOrder, lastMs };
    });
    return longestFirst(scheduled, EXPECTED_SECONDS).map((entry) => entry.spec);
  }
}

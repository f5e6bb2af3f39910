import { join } from 'node:path';
import { CrewError, refuse } from '../core/errors.js';

/** A run id as a path segment: no separators, no `..`, nothing a shell or file system reads specially. */
const SAFE_RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/**
 * Where a run's transcript lives: `$CREW_HOME/subagents/<id>/result.txt` (DESIGN §6, Files). The id
 * becomes a directory name, so one that could leave `subagents/` is refused (`invalid_argument`, path `id`).
 */
export function transcriptPath(crewHome: string, runId: string): string {
  if (!SAFE_RUN_ID.test(runId)) {
    throw new CrewError(
      refuse(
        'invalid_argument',
        `Expected a run id of letters, digits, '-' and '_', got ${JSON.stringify(runId)}`,
        {
          path: 'id',
        },
      ),
    );
  }
  return join(crewHome, 'subagents', runId, 'result.txt');
}

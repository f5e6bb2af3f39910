import { CrewError } from '../core/errors.js';
import type { RunSpec } from '../core/types.js';
import { confineCwd } from './validate.js';

/**
 * A queued run's `cwd` is judged again when it starts (issue 28, item 4): between admission and start the
 * directory may have been swapped for a symlink that leads outside the allowed roots. Resolved with
 * realpath and compared to the (resolved) roots, like at admission.
 *
 * @returns the directory to start in (the resolved path, so a swap after this look changes a name, not
 *   where the process works), or the refusal's text when it now lies outside.
 */
export function cwdAtStart(
  spec: RunSpec,
  allowedRoots: readonly string[],
): { cwd: string | undefined } | { refused: string } {
  if (!spec.cwdConfined || spec.cwd === undefined) return { cwd: spec.cwd };
  try {
    return { cwd: confineCwd(spec.cwd, allowedRoots) };
  } catch (error) {
    if (!(error instanceof CrewError)) throw error;
    return { refused: `${error.code} at start: ${error.message}` };
  }
}

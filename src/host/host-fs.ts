import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every host read goes through the host root (`CREW_HOST_ROOT`, default `/`), so tests point the probes
 * at fixture trees. Reads are synchronous on purpose: files under `/proc` and `/sys` are generated in
 * memory by the kernel, and one tick must not interleave with another.
 */

/** The host root from the environment. @default '/' */
export function hostRootFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.CREW_HOST_ROOT;
  return root !== undefined && root !== '' ? root : '/';
}

/** `relPath` (absolute or not) placed under `hostRoot`. */
export function hostPath(hostRoot: string, relPath: string): string {
  return join(hostRoot, relPath);
}

/** The file's text, or `undefined` when it cannot be read (absent, a directory, no permission). */
export function readHostText(hostRoot: string, relPath: string): string | undefined {
  try {
    return readFileSync(hostPath(hostRoot, relPath), 'utf8');
  } catch {
    return undefined;
  }
}

/** The file's bytes, or `undefined` when it cannot be read. */
export function readHostBytes(hostRoot: string, relPath: string): Buffer | undefined {
  try {
    return readFileSync(hostPath(hostRoot, relPath));
  } catch {
    return undefined;
  }
}

import { execFileSync } from 'node:child_process';

/** How long a probe's answer holds: bubblewrap being installed or removed is rare. */
const PROBE_TTL_MS = 60_000;
const probes = new Map<string, { at: number; problem: string | undefined }>();

/**
 * Whether bubblewrap can make the sandbox Crew uses here (new user, pid and network namespaces), by
 * running it once: `undefined` when it can, else what went wrong. Cached per executable for a minute, so
 * admission pays the ~10 ms probe once, not per spawn.
 */
export function probeSandbox(bwrap: string, now = Date.now()): string | undefined {
  const cached = probes.get(bwrap);
  if (cached && now - cached.at < PROBE_TTL_MS) return cached.problem;
  let problem: string | undefined;
  try {
    execFileSync(
      bwrap,
      ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-all', '--die-with-parent', '--', 'true'],
      { timeout: 5000, stdio: ['ignore', 'ignore', 'pipe'] },
    );
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    problem =
      code === 'ENOENT'
        ? `${bwrap} is not installed`
        : `${bwrap} cannot create namespaces here${stderr ? ` (${stderr.slice(0, 200)})` : ''}`;
  }
  probes.set(bwrap, { at: now, problem });
  return problem;
}

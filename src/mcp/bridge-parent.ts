import { createHash } from 'node:crypto';
import { basename } from 'node:path';

/** What `--parent` / `CREW_PARENT` may hold: the daemon's `X-Crew-Parent` shape. */
const PARENT_VALUE = /^[A-Za-z0-9._:@/-]{1,200}$/;

/**
 * The parent name `crew mcp` sends as `X-Crew-Parent` (issue 29), fixed for the bridge's life:
 * `--parent NAME`, else `CREW_PARENT`, else the client's name from `initialize` and the project
 * directory (`claude-code@my-project-1a2b3c4d`, the hash telling apart two projects of one name). A
 * parent that restarts in the same project is the same parent, so what finished while it was away is
 * delivered to it once it is back. Two windows of one client on one project share that parent; give
 * each its own `--parent` to keep them apart.
 */
export function bridgeParentName(options: {
  explicit: string | undefined;
  clientName: string | undefined;
  cwd: string;
}): string {
  if (options.explicit !== undefined) return options.explicit;
  const client = tidy(options.clientName ?? '') || 'client';
  const project = tidy(basename(options.cwd)) || 'root';
  const hash = createHash('sha256').update(options.cwd).digest('hex').slice(0, 8);
  return `${client}@${project}-${hash}`;
}

/** Why an explicit parent name cannot be used, or undefined when it can. */
export function parentNameProblem(name: string): string | undefined {
  return PARENT_VALUE.test(name)
    ? undefined
    : `the parent name ${JSON.stringify(name.slice(0, 80))} must be 1-200 letters, digits and . _ - : @ /`;
}

function tidy(text: string): string {
  return text
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
}

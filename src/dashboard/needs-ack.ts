import type { RunView } from '../gateway/run-view.js';

/**
 * Parents that are people, not agents: a Slack user, a hosted chat (a person types into it), and the CLI
 * (someone ran `crew spawn` at a terminal). Their completions wait on the dashboard for an ack.
 */
const PERSON_PREFIXES = ['slack:', 'chat:', 'cli:'] as const;
/** End states a person should look at whoever the parent is: the agent parent may not have coped. */
const NEEDS_LOOK = new Set(['failed', 'timed_out', 'lost']);

export function isPersonParent(parent: string): boolean {
  return PERSON_PREFIXES.some((prefix) => parent.startsWith(prefix));
}

/**
 * Whether an ended top-level run's completion needs a person (issue 32): it failed, timed out or was
 * lost, its event could not be delivered, or its parent is a person. A run that completed (or was
 * cancelled) for an agent parent was handed to that agent, which is the one to act on it.
 */
export function needsHuman(run: Pick<RunView, 'status' | 'parent' | 'delivery'>): boolean {
  return NEEDS_LOOK.has(run.status) || run.delivery === 'undeliverable' || isPersonParent(run.parent);
}

import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Grandchildren (`#sim child=sleep`): a real extra process in the agent's process group, so tests can
 * check that stopping a run takes the whole tree down. Each lives until its turn ends or the agent
 * process exits, whichever comes first.
 */

const live = new Set<ChildProcess>();

/** Starts `sleep 1000` with no stdio of ours (so it never holds the protocol pipe open). */
export function startGrandchild(): ChildProcess {
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  child.on('error', (error) => process.stderr.write(`sim: grandchild failed: ${error.message}\n`));
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Stops one grandchild (no-op when it is gone). */
export function stopGrandchild(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  live.delete(child);
}

/** Stops every grandchild; synchronous, so it can run in an `exit` handler. */
export function stopAllGrandchildren(): void {
  for (const child of [...live]) stopGrandchild(child);
}

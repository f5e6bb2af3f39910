import { spawn } from 'node:child_process';
import { crewCommand } from '../helpers/daemon-process.js';

/** Runs `crew <args>` as a real process (from the test bundle) to its exit, killed after `timeoutMs`. */
export function runCrew(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 60_000,
  cwd?: string,
): Promise<{ code: number | null; out: string; err: string }> {
  const [node, argv] = crewCommand(args);
  return new Promise((resolve, reject) => {
    const proc = spawn(node, argv, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(cwd !== undefined ? { cwd } : {}),
    });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`crew ${args.join(' ')} timed out: ${err}`));
    }, timeoutMs);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

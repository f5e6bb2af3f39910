import { execFile } from 'node:child_process';

/**
 * Runs git without a shell (argv only), with a timeout and a bound on what it may print, so a hung or
 * chatty git never stalls the gateway. The environment drops the variables that would point git at
 * another repository or index than the one named (`GIT_DIR`, `GIT_INDEX_FILE`, …): a daemon started from a
 * git hook must not write the parent's index.
 */
export interface GitOptions {
  /** Directory git runs in (`-C`). */
  cwd: string;
  /** @default 30000 */
  timeoutMs?: number;
  /** Extra environment (e.g. `GIT_INDEX_FILE` for a private index). */
  env?: Record<string, string>;
  /** Bytes of stdout kept at most. @default 16 MiB */
  maxBytes?: number;
}

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A git that failed or timed out: the argv and what it said, for the log and the refusal. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    super(`git ${args.join(' ')} failed (${result.code}): ${result.stderr.trim().slice(0, 500)}`);
    this.name = 'GitError';
  }
}

/** Git environment variables that would redirect a command away from the repository it is run in. */
const REDIRECTING = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_CEILING_DIRECTORIES',
];

export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REDIRECTING) delete env[name];
  // Commits Crew makes name Crew; a machine without user.name still commits.
  env.GIT_AUTHOR_NAME ??= 'Crew';
  env.GIT_AUTHOR_EMAIL ??= 'crew@localhost';
  env.GIT_COMMITTER_NAME ??= 'Crew';
  env.GIT_COMMITTER_EMAIL ??= 'crew@localhost';
  env.GIT_TERMINAL_PROMPT = '0';
  env.LC_ALL = 'C';
  return { ...env, ...extra };
}

/** Runs `git args` and resolves with its exit code and output (a non-zero exit is not a rejection). */
export function gitRaw(args: readonly string[], options: GitOptions): Promise<GitResult> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['-C', options.cwd, ...args],
      {
        env: gitEnv(options.env),
        timeout: options.timeoutMs ?? 30_000,
        killSignal: 'SIGKILL',
        maxBuffer: options.maxBytes ?? 16 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        if (!error) return resolve({ code: 0, stdout, stderr });
        const code =
          typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1;
        const why = (error as { killed?: boolean }).killed
          ? `timed out or killed; ${stderr}`
          : stderr || error.message;
        resolve({ code, stdout: stdout ?? '', stderr: why });
      },
    );
  });
}

/** Runs `git args` and resolves with its trimmed stdout; rejects with a {@link GitError} on a non-zero exit. */
export async function git(args: readonly string[], options: GitOptions): Promise<string> {
  const result = await gitRaw(args, options);
  if (result.code !== 0) throw new GitError(args, result);
  return result.stdout.replace(/\n$/, '');
}

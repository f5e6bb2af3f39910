import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEFAULT_ANSWER } from '../../src/sim/answer.js';
import { CANCELLED_EXIT_CODE } from '../../src/sim/once.js';
import { CRASH_EXIT_CODE } from '../../src/sim/turn.js';
import { grandchildPids, isAlive, simCommand, waitUntil } from '../helpers/sim.js';

interface OnceResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `crew-sim-agent --once <task>`; `onStdout` may act on the process while it runs. */
function once(task: string, onStdout?: (text: string, kill: () => void) => void): Promise<OnceResult> {
  const [file, ...args] = simCommand('--once', task) as [string, ...string[]];
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    onStdout?.(stdout, () => child.kill('SIGTERM'));
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('crew-sim-agent --once', () => {
  it('writes the answer to stdout and exits 0', async () => {
    expect(await once('do it')).toEqual({ code: 0, stdout: DEFAULT_ANSWER, stderr: '' });
  });

  it('obeys output directives, tool calls included', async () => {
    const result = await once('#sim chunks=2 tools=1 sleep=100ms');
    expect(result.stdout).toBe('sim: chunk 1/2\ntool: sim tool 1\nsim: chunk 2/2\n');
    expect((await once('#sim bytes=5000')).stdout).toHaveLength(5000);
  });

  it('exits with the code from exit=N', async () => {
    expect((await once('#sim exit=3')).code).toBe(3);
  });

  it.each([
    ['fail=crash', CRASH_EXIT_CODE],
    ['fail=error', 1],
    ['fail=refusal', 1],
  ])('exits non-zero on %s', async (directive, code) => {
    const result = await once(`#sim ${directive}`);
    expect(result.code).toBe(code);
    expect(result.stderr).not.toBe('');
  });

  it('fails a spawn clearly: one-shot mode has no MCP server to call', async () => {
    const result = await once('#sim spawn="a task" wait');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('one-shot mode has none');
  });

  it('hangs until SIGTERM, then exits 143 and takes its grandchild down', async () => {
    let grandchild: number | undefined;
    const result = await once('#sim child=sleep hang', (text, kill) => {
      if (grandchild !== undefined) return;
      grandchild = grandchildPids(text)[0];
      if (grandchild !== undefined) kill();
    });
    expect(result.code).toBe(CANCELLED_EXIT_CODE);
    expect(grandchild).toBeDefined();
    await waitUntil(() => !isAlive(grandchild!), 5000, 'grandchild gone');
  });
});

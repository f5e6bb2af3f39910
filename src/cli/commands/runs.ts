import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import type { Refusal } from '../../core/errors.js';
import { parentLabel } from '../../core/parent-label.js';
import { MAX_TURNS_LIMIT } from '../../core/refusals.js';
import { CLI_LOG_PARENT } from '../../daemon/daemon-address.js';
import { runningLine } from '../../gateway/answers.js';
import { runTable } from '../../gateway/run-table.js';
import type { RunView } from '../../gateway/run-view.js';
import type { CliContext } from '../context.js';
import { daemonClient } from '../daemon-client.js';
import { alreadyReported } from '../exit-codes.js';

type Answer = { ok: boolean; refusal?: Refusal } & Record<string, unknown>;

/** `crew spawn|list|status|steer|continue|release|cancel`: they talk to the daemon (exit 3 if none). */
export function registerRunCommands(program: Command, ctx: CliContext): void {
  const client = () => daemonClient(ctx.crewHome, process.env);
  /** `json: 'later'`: stdout is kept for the one JSON document the command prints at its end. */
  const answer = (body: Answer, json: boolean | 'later' | undefined, human: (b: Answer) => void) => {
    if (json === true || (json === 'later' && !body.ok)) ctx.out(JSON.stringify(body, null, 2));
    else if (body.ok && !json) human(body);
    if (!body.ok) {
      if (!json) ctx.err(`crew: refused (${body.refusal?.code}): ${body.refusal?.message}`);
      throw alreadyReported();
    }
  };

  program
    .command('spawn')
    .description('spawn a sub-agent run (several tasks = one wave)')
    .argument('<task...>', 'the task; with --wave each argument is one task of a wave')
    .option('--agent <name>', 'named agent (see crew agents)')
    .option('--wave', 'each argument is a separate task of one wave')
    .option('--keep', 'keep the conversation for crew continue')
    .option(
      '--cwd <dir>',
      'working directory, relative to this one (must be under agent.subagent_cwd_allowed_roots)',
    )
    .option('--max-turns <n>', `tool-call budget (0-${MAX_TURNS_LIMIT})`, maxTurnsOption)
    .option('--model <model>', 'model for the agent')
    .option('--command-id <id>', 'idempotency key: the same id never admits twice')
    .option('--wait', 'wait for the completion event(s) and print them')
    .option('--json', 'print JSON')
    .action(async (tasks: string[], options) => {
      const waitParent = `cli:${randomUUID()}`;
      const args = {
        ...(options.wave ? { tasks } : { task: tasks.join(' ') }),
        ...(options.agent ? { agent: options.agent } : {}),
        ...(options.keep ? { keep: true } : {}),
        // Resolved here, against the caller's directory: the daemon's is another.
        ...(options.cwd ? { cwd: resolve(process.cwd(), options.cwd) } : {}),
        ...(options.maxTurns !== undefined ? { max_turns: options.maxTurns } : {}),
        ...(options.model ? { model: options.model } : {}),
        ...(options.commandId ? { command_id: options.commandId } : {}),
      };
      const c = client();
      const body = await c.call('POST', '/api/spawn', {
        parent: options.wait ? waitParent : CLI_LOG_PARENT,
        args,
        cwd: process.cwd(),
      });
      answer(body, options.json ? (options.wait ? 'later' : true) : false, (b) => {
        const runs = b.runs as { id: string; status: string; position?: number }[];
        for (const run of runs)
          ctx.out(`${run.id}  ${run.status}${run.position ? ` (queue position ${run.position})` : ''}`);
      });
      if (!options.wait) return;
      const ids = new Set((body.runs as { id: string }[]).map((r) => r.id));
      const events: unknown[] = [];
      const seen = new Set<string>();
      while ([...ids].some((id) => !seen.has(id))) {
        const got = await c.call<{ events: { run_ids: string[]; text: string }[] }>(
          'GET',
          `/api/events?parent=${encodeURIComponent(waitParent)}&timeout_secs=20`,
        );
        for (const event of got.events ?? []) {
          for (const id of event.run_ids) seen.add(id);
          events.push(event);
          if (!options.json) ctx.out(event.text);
        }
        if (ctx.isTty && !options.json) {
          const list = await c.call<{ running: number; queued: number }>('GET', '/api/runs?limit=1');
          process.stderr.write(
            `\r${seen.size}/${ids.size} done · ${list.running} running · ${list.queued} queued   `,
          );
        }
      }
      if (ctx.isTty && !options.json) process.stderr.write('\n');
      if (options.json) ctx.out(JSON.stringify({ ...body, events }, null, 2));
      // Exit 1 when a run did not complete (DESIGN §6: 1 = refused or failed).
      const unsuccessful: string[] = [];
      for (const id of ids) {
        const status = await c.call<{ run?: { status: string } }>(
          'GET',
          `/api/runs/${encodeURIComponent(id)}?offset=0&limit=1`,
        );
        const ended = status.run?.status;
        if (ended !== 'completed') unsuccessful.push(`${id} ${ended ?? 'unknown'}`);
      }
      if (unsuccessful.length > 0) {
        ctx.err(
          `crew: ${unsuccessful.length} of ${ids.size} runs did not complete: ${unsuccessful.join(', ')}`,
        );
        throw alreadyReported();
      }
    });

  program
    .command('list')
    .description('runs, newest first (--claude: Claude Code sub-agents in flight)')
    .option('--json', 'print JSON')
    .option('--limit <n>', 'at most this many runs', (v) => Number(v), 50)
    .option('--claude', "list Claude Code's own sub-agents held by the width hook")
    .action(async (options) => {
      if (options.claude) {
        const { listClaudeInFlight } = await import('../../hooks/claude-in-flight-list.js');
        const { formatClaudeInFlight } = await import('../../hooks/claude-in-flight-format.js');
        const list = await listClaudeInFlight(ctx.crewHome);
        ctx.out(options.json ? JSON.stringify(list, null, 2) : formatClaudeInFlight(list));
        return;
      }
      const body = await client().call('GET', `/api/runs?limit=${options.limit}`);
      answer(body, options.json, (b) => {
        ctx.out(`${runningLine(b)} · queued ${b.queued}`);
        ctx.out(runTable(b.runs as RunView[], { parents: true }));
      });
    });

  program
    .command('status')
    .description('one run and its transcript (paged)')
    .argument('<id>')
    .option('--offset <n>', 'first line (0-based)', (v) => Number(v))
    .option('--limit <n>', 'lines per page', (v) => Number(v))
    .option('--grep <pattern>', 'only matching lines')
    .option('--json', 'print JSON')
    .action(async (id: string, options) => {
      const query = new URLSearchParams();
      if (options.offset !== undefined) query.set('offset', String(options.offset));
      if (options.limit !== undefined) query.set('limit', String(options.limit));
      if (options.grep !== undefined) query.set('grep', options.grep);
      const body = await client().call('GET', `/api/runs/${encodeURIComponent(id)}?${query}`);
      answer(body, options.json, (b) => {
        const run = b.run as RunView;
        ctx.out(
          `${run.id}  ${run.status}  agent=${run.agent}  parent=${parentLabel(run.parent, run.parent_name).label}${run.duration_secs !== undefined ? `  ${run.duration_secs.toFixed(1)}s` : ''}  delivery=${run.delivery}`,
        );
        if (run.error) ctx.out(`error: ${run.error}${run.error_kind ? ` (${run.error_kind})` : ''}`);
        if (run.usage) ctx.out(`usage: ${formatUsage(run.usage)}`);
        if (b.text) ctx.out(String(b.text));
      });
    });

  program
    .command('steer')
    .description('send guidance to a running run')
    .argument('<id>')
    .argument('<message...>')
    .option('--follow-up', 'deliver when the current turn ends instead of interrupting')
    .option('--json', 'print JSON')
    .action(async (id: string, message: string[], options) => {
      const body = await client().call('POST', `/api/runs/${encodeURIComponent(id)}/steer`, {
        message: message.join(' '),
        mode: options.followUp ? 'follow_up' : 'interrupt',
      });
      answer(body, options.json, () => ctx.out(`steered ${id}`));
    });

  program
    .command('cancel')
    .description('cancel a run (and its descendants)')
    .argument('<id>')
    .option('--json', 'print JSON')
    .action(async (id: string, options) => {
      const body = await client().call('POST', `/api/runs/${encodeURIComponent(id)}/cancel`);
      answer(body, options.json, () => ctx.out(`cancelled ${id}`));
    });

  program
    .command('merge')
    .description(
      "merge a run's worktree branch, or a wave's members that do not conflict, into a branch (no checkout is touched)",
    )
    .argument('<id>', 'a run id, or a wave (batch) id with --wave')
    .requiredOption('--into <branch>', 'the target branch (not one checked out anywhere)')
    .option('--wave', 'the id is a wave: merge its members that do not conflict, in order')
    .option('--json', 'print JSON')
    .action(async (id: string, options) => {
      const body = await client().call('POST', '/api/merge', {
        ...(options.wave ? { batch_id: id } : { agent_id: id }),
        target: options.into,
      });
      answer(body, options.json, (b) => {
        ctx.out(
          `merged into ${String(b.target)} at ${String(b.head)}: ${(b.merged as string[]).join(', ') || 'nothing'}`,
        );
        for (const r of (b.refused as { id: string; refusal: { message: string } }[]) ?? [])
          ctx.out(`not merged ${r.id}: ${r.refusal.message}`);
      });
    });

  program
    .command('continue')
    .description('continue a kept conversation with a new task')
    .argument('<conversation>')
    .argument('<task...>')
    .option('--json', 'print JSON')
    .action(async (conversation: string, task: string[], options) => {
      const body = await client().call(
        'POST',
        `/api/conversations/${encodeURIComponent(conversation)}/continue`,
        {
          parent: CLI_LOG_PARENT,
          args: { task: task.join(' ') },
        },
      );
      answer(body, options.json, (b) => {
        for (const run of b.runs as { id: string; status: string }[]) ctx.out(`${run.id}  ${run.status}`);
      });
    });

  program
    .command('release')
    .description('release a kept conversation')
    .argument('<conversation>')
    .option('--json', 'print JSON')
    .action(async (conversation: string, options) => {
      const body = await client().call(
        'POST',
        `/api/conversations/${encodeURIComponent(conversation)}/release`,
      );
      answer(body, options.json, () => ctx.out(`released ${conversation}`));
    });
}

/** `--max-turns`: an integer 0..200, or a usage error that says what was given. */
function maxTurnsOption(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > MAX_TURNS_LIMIT) {
    throw new InvalidArgumentError(
      `--max-turns takes an integer from 0 to ${MAX_TURNS_LIMIT}, got "${value}".`,
    );
  }
  return n;
}

/** `1,500 tokens of 200,000 · $0.0200`: the agent's last usage report. */
export function formatUsage(usage: NonNullable<RunView['usage']>): string {
  const parts: string[] = [];
  if (usage.tokens !== undefined) {
    parts.push(
      `${usage.tokens.toLocaleString('en-US')} tokens${usage.context_tokens !== undefined ? ` of ${usage.context_tokens.toLocaleString('en-US')}` : ''}`,
    );
  }
  if (usage.cost_usd !== undefined) parts.push(`$${usage.cost_usd.toFixed(4)}`);
  return parts.join(' · ') || '-';
}

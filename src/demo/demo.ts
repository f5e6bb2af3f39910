import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon } from '../daemon/daemon.js';
import { runTable } from '../gateway/run-table.js';
import type { RunView } from '../gateway/run-view.js';

export interface DemoOptions {
  out: (line: string) => void;
  /** Redraw a progress line (TTY only). */
  progress?: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

const PACKAGES = [
  'auth',
  'billing',
  'cache',
  'cli',
  'config',
  'db',
  'http',
  'jobs',
  'logging',
  'mail',
  'search',
  'ui',
];

/**
 * `crew demo`: a real gateway (SQLite store, the simulator as a real ACP agent, the auto-sized cap, the
 * HTTP MCP endpoint its sub-agents call back) on a temporary CREW_HOME, driven through a realistic
 * fan-out: a 12-task review wave, a flood of 40 single spawns against the bounded queue, a steer, a
 * cancel, and a sub-agent whose own spawn is refused at depth 1. Ends with a table and the digest.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const { out } = options;
  const home = mkdtempSync(join(tmpdir(), 'crew-demo-'));
  writeFileSync(
    join(home, 'config.json'),
    JSON.stringify({
      'agent.subagent_spawn_stagger_secs': 0.1,
      'host.sample_interval_secs': 0.25,
    }),
  );
  const daemon = await startDaemon({
    crewHome: home,
    port: 0,
    cwd: home,
    env: options.env,
    log: () => undefined,
  });
  const { gateway } = daemon;
  const started = Date.now();
  try {
    const resources = (await (await fetchResources(daemon.url, home)).json()) as Record<string, unknown>;
    out(`crew demo — a real gateway on ${daemon.url} (home ${home})`);
    out(
      `cap ${resources.cap} (${resources.cap_source}): mem_term ${resources.mem_term}, cpu_term ${resources.cpu_term}; ` +
        `${Number(resources.available_memory_gb).toFixed(1)} GiB available, ${resources.cpu_count} CPUs, posture ${resources.posture}`,
    );

    const parent = 'cli:demo';
    const wave = gateway.spawn(parent, {
      tasks: PACKAGES.map(
        (pkg, i) =>
          `Review package ${pkg} for error handling and tests.\n#sim sleep=${400 + ((i * 7) % 5) * 250}ms chunks=${3 + (i % 4)} bytes=${600 + i * 150} mem=${20 + (i % 3) * 15}mb`,
      ),
    });
    if (wave.ok)
      out(
        `wave ${wave.batch_id}: 12 review tasks admitted whole (${count(wave.runs, 'starting')} starting, ${count(wave.runs, 'queued')} queued)`,
      );

    const steered = gateway.spawn(parent, { task: 'Summarise the changelog.\n#sim sleep=2500ms chunks=10' });
    const depth = gateway.spawn(parent, {
      task: 'Split the audit into parts and delegate them.\n#sim spawn="#sim sleep=50ms audit part 1" wait',
    });

    let queued = 0;
    let refused = 0;
    let firstRefusal = '';
    const singles: string[] = [];
    for (let i = 0; i < 40; i++) {
      const r = gateway.spawn(parent, { task: `Lint file ${i}.\n#sim sleep=150ms bytes=200` });
      if (r.ok) {
        singles.push(...r.runs.map((run) => run.id));
        if (r.runs[0]?.status === 'queued') queued++;
      } else {
        refused++;
        firstRefusal ||= `${r.refusal.code}: ${r.refusal.message}`;
      }
    }
    out(
      `flood of 40 single spawns: ${queued} queued, ${refused} refused — ${firstRefusal || 'none refused'}`,
    );

    const cancelId = singles.at(-1);
    if (cancelId) {
      const cancelled = gateway.cancel(cancelId, { kind: 'operator' });
      out(
        `cancel ${cancelId} (queued): ${cancelled.ok ? 'removed from the queue, nothing was started' : cancelled.refusal.message}`,
      );
    }

    let steerDone = false;
    const ids = new Set<string>([
      ...(wave.ok ? wave.runs.map((r) => r.id) : []),
      ...(steered.ok ? steered.runs.map((r) => r.id) : []),
      ...(depth.ok ? depth.runs.map((r) => r.id) : []),
      ...singles,
    ]);
    const events: { text: string; kind: string }[] = [];
    const deadline = Date.now() + 50_000;
    for (;;) {
      const views = gateway.list({ kind: 'operator' }, 1000).runs.filter((r) => ids.has(r.id));
      const done = views.filter((r) => !['queued', 'starting', 'running'].includes(r.status)).length;
      options.progress?.(
        `  ${done}/${ids.size} done · ${views.filter((r) => r.status === 'running').length} running · ${views.filter((r) => r.status === 'queued').length} queued · ${((Date.now() - started) / 1000).toFixed(1)}s`,
      );
      if (!steerDone && steered.ok) {
        const view = views.find((r) => r.id === steered.runs[0]?.id);
        if (view?.status === 'running') {
          const s = gateway.steer(view.id, 'Focus on breaking changes only.', 'follow_up', {
            kind: 'operator',
          });
          steerDone = true;
          out(
            `steer ${view.id} (running, follow_up): ${s.ok ? 'delivered at once, no slot taken' : s.refusal.message}`,
          );
        }
      }
      events.push(...(await gateway.waitForEvents(parent, 250)));
      if (done === ids.size || Date.now() > deadline) break;
    }
    options.progress?.('');
    events.push(...(await gateway.waitForEvents(parent, 0)));

    const views = gateway.list({ kind: 'operator' }, 1000).runs.filter((r) => ids.has(r.id));
    const shown: RunView[] = [
      ...views.filter((r) => r.batch_id !== undefined),
      ...views.filter((r) => steered.ok && r.id === steered.runs[0]?.id),
      ...views.filter((r) => depth.ok && r.id === depth.runs[0]?.id),
    ];
    out('');
    out(runTable(shown));
    out(
      `… and ${views.length - shown.length} single lint runs: ${summarize(views.filter((r) => !shown.includes(r)))}`,
    );
    if (depth.ok) {
      const status = await gateway.status(depth.runs[0]!.id, { kind: 'operator' });
      const line = status.ok
        ? String(status.text)
            .split('\n')
            .find((l) => l.includes('refused'))
        : undefined;
      out(`\nthe delegating sub-agent's own spawn: ${line?.trim() ?? '(no refusal line found)'}`);
    }
    const digest = events.find((e) => e.kind === 'digest');
    if (digest) {
      out('\nthe wave came back as one digest:');
      out(digest.text.split('\n').slice(0, 12).join('\n'));
      out('  …');
    }
    out(
      `\n${events.length} completion events delivered for ${ids.size} runs (a wave is one event) in ${((Date.now() - started) / 1000).toFixed(1)}s`,
    );
  } finally {
    await daemon.shutdown(0);
    rmSync(home, { recursive: true, force: true });
  }
}

function count(runs: { status: string }[], status: string): number {
  return runs.filter((r) => r.status === status).length;
}

function summarize(runs: RunView[]): string {
  const by = new Map<string, number>();
  for (const run of runs) by.set(run.status, (by.get(run.status) ?? 0) + 1);
  return [...by].map(([s, n]) => `${n} ${s}`).join(', ');
}

async function fetchResources(url: string, home: string): Promise<Response> {
  const { readToken } = await import('../daemon/daemon-address.js');
  return fetch(`${url}/api/resources`, { headers: { authorization: `Bearer ${readToken(home, {})}` } });
}

import type { Command } from 'commander';
import { type CheckResult, checkAgent } from '../../agents/check-agent.js';
import { formatAgents, publicAgent } from '../../agents/format-agents.js';
import { loadAgents } from '../../agents/load-agents.js';
import { findPreset, presetStatuses } from '../../agents/presets.js';
import { realClock } from '../../clock/real-clock.js';
import type { ClusterStatus } from '../../cluster/cluster-status.js';
import { loadConfig } from '../../config/config-file.js';
import type { AgentDef } from '../../core/agent-def.js';
import { CrewFault } from '../../core/errors.js';
import { readToken } from '../../daemon/daemon-address.js';
import { isDaemonUp } from '../../daemon/daemon-health.js';
import { sizeCapAtStart } from '../../host/cap-at-start.js';
import { CostSampleLog, costSamplesPath } from '../../host/cost-samples.js';
import { createHostProbe } from '../../host/create-host-probe.js';
import { type ResourceStatus, resourceStatus } from '../../host/resource-status.js';
import { capInWords, learnedCostsInWords } from '../cap-in-words.js';
import type { CliContext } from '../context.js';
import { daemonClient } from '../daemon-client.js';

/** `crew resources` and `crew agents`: they work without a daemon. */
export function registerLocalCommands(program: Command, ctx: CliContext): void {
  program
    .command('resources')
    .description('host memory, CPUs, posture and the cap (no daemon needed)')
    .option('--json', 'print JSON')
    .action(async (options) => {
      const body = await localOrDaemonResources(ctx);
      if (options.json) {
        ctx.out(JSON.stringify(body, null, 2));
        return;
      }
      const r = body as ResourceStatus & { cluster?: ClusterStatus };
      const gb = (v: unknown) => (typeof v === 'number' ? `${v.toFixed(2)} GiB` : 'unknown');
      ctx.out(`available memory  ${gb(r.available_memory_gb)}  (posture ${r.posture})`);
      ctx.out(
        `cpus              ${r.cpu_count ?? 'unknown'}  load ${(r.load_average ?? []).join(' ') || 'unknown'}`,
      );
      ctx.out(`cap               ${capInWords(r).replace(/^cap /, '')}`);
      ctx.out(`running / queued  ${r.running} / ${r.queued}`);
      const learned = learnedCostsInWords(r);
      ctx.out(`learned costs     ${learned.length === 0 ? 'none yet (no run has finished)' : learned[0]}`);
      for (const line of learned.slice(1)) ctx.out(`                  ${line}`);
      if (r.cluster) for (const line of formatCluster(r.cluster)) ctx.out(line);
    });

  const agents = program
    .command('agents')
    .description('the named agents, where each came from, and the presets not enabled yet')
    .option('--json', 'print JSON')
    .action(async (options) => {
      const { config } = loadConfig(ctx.crewHome);
      const loaded = await loadAgents({ crewHome: ctx.crewHome, projectDir: process.cwd(), config });
      const presets = presetStatuses(new Set(loaded.agents.keys()));
      if (options.json) {
        ctx.out(
          JSON.stringify(
            { agents: [...loaded.agents.values()].map(publicAgent), presets, problems: loaded.problems },
            null,
            2,
          ),
        );
      } else ctx.out(formatAgents(loaded, { presets }));
    });

  agents
    .command('check [name]')
    .description('start each agent (or NAME), run initialize and session/new, and say how it went')
    .option('--timeout <secs>', 'limit per agent', '30')
    .option('--json', 'print JSON')
    .action(async (name: string | undefined, options: { timeout: string; json?: boolean }) => {
      const { config } = loadConfig(ctx.crewHome);
      const loaded = await loadAgents({ crewHome: ctx.crewHome, projectDir: process.cwd(), config });
      const targets: AgentDef[] = [];
      if (name === undefined) targets.push(...loaded.agents.values());
      else {
        const agent = loaded.agents.get(name);
        const preset = findPreset(name);
        if (agent) targets.push(agent);
        else if (preset) {
          targets.push({
            name,
            runner: 'acp',
            command: preset.command,
            shared: false,
            skills: [],
            ...(preset.env && { env: preset.env }),
          });
        } else {
          ctx.usage(`no agent or preset named "${name}"; see crew agents`);
        }
      }
      const timeoutMs = Math.max(1, Number(options.timeout) || 30) * 1000;
      const results = [];
      for (const agent of targets) {
        results.push(await checkAgent(agent, { clock: realClock, env: process.env, timeoutMs }));
      }
      // `--json` after `check` may be taken by `agents`, which has one too.
      const json = options.json === true || agents.opts().json === true;
      if (json) ctx.out(JSON.stringify({ ok: results.every(isHealthy), results }, null, 2));
      else {
        for (const r of results) {
          const methods = r.authMethods?.length ? ` (methods: ${r.authMethods.join(', ')})` : '';
          const missing = r.missingEnv?.length ? ` [unset: ${r.missingEnv.join(', ')}]` : '';
          ctx.out(`${r.name}  ${r.outcome}  ${(r.ms / 1000).toFixed(1)}s  ${r.message}${methods}${missing}`);
        }
      }
      if (!results.every(isHealthy)) {
        throw new CrewFault('command_failed', 'an agent failed its check', { reported: true });
      }
    });
}

/** `crew resources` in cluster mode: the provider cap with its running total, then each gateway. */
function formatCluster(c: ClusterStatus): string[] {
  return [
    `cluster           ${c.name}${c.available ? '' : ' (Redis unavailable)'}: ${c.running} running of provider cap ${c.provider_cap}${capNote(c)}, ${c.queued} queued`,
    ...c.gateways.map(
      (g) =>
        `  gateway ${g.name.padEnd(20)} cap ${g.cap}, running ${g.running}${g.name === c.gateway ? '  (this one)' : ''}`,
    ),
  ];
}

/** ` (adaptive, ceiling 12; starts held until …)` after the cluster's cap, when it says more than the number. */
function capNote(c: ClusterStatus): string {
  const parts: string[] = [];
  if (c.provider_cap_source === 'adaptive') parts.push(`adaptive, ceiling ${c.provider_cap_ceiling}`);
  if (c.hold_until) parts.push(`starts held until ${c.hold_until}`);
  return parts.length > 0 ? ` (${parts.join('; ')})` : '';
}

function isHealthy(result: CheckResult): boolean {
  return result.outcome === 'ok' || result.outcome === 'skipped';
}

/** The daemon's view when one runs (it knows running/queued); else computed here, as at a start. */
async function localOrDaemonResources(ctx: CliContext): Promise<object> {
  const client = daemonClient(ctx.crewHome, process.env);
  if (await isDaemonUp(client.url, readToken(ctx.crewHome, process.env))) {
    const body = await client.call('GET', '/api/resources');
    if (body.ok) return body;
  }
  const { config } = loadConfig(ctx.crewHome);
  const probe = createHostProbe({ hostRoot: process.env.CREW_HOST_ROOT ?? '/', clock: realClock });
  try {
    const samples = new CostSampleLog({
      path: costSamplesPath(ctx.crewHome),
      perAgent: config['agent.cost_samples_per_agent'],
    }).read();
    const startup = sizeCapAtStart({ probe, config, samples });
    return {
      ok: true,
      ...resourceStatus({
        probe,
        minMemoryGb: config['agent.spawn_min_memory_gb'],
        cap: startup.cap,
        costs: startup.costs,
        basis: startup.basis,
        running: 0,
        queued: 0,
      }),
    };
  } finally {
    await probe.close();
  }
}

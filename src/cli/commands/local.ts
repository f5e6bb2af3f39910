import type { Command } from 'commander';
import { formatAgents } from '../../agents/format-agents.js';
import { loadAgents } from '../../agents/load-agents.js';
import { realClock } from '../../clock/real-clock.js';
import { loadConfig } from '../../config/config-file.js';
import { readToken } from '../../daemon/daemon-address.js';
import { sizeCapAtStart } from '../../host/cap-at-start.js';
import { CostSampleLog, costSamplesPath } from '../../host/cost-samples.js';
import { createHostProbe } from '../../host/create-host-probe.js';
import { resourceStatus } from '../../host/resource-status.js';
import type { CliContext } from '../context.js';
import { daemonClient, isDaemonUp } from '../daemon-client.js';

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
      const r = body as Record<string, unknown>;
      const gb = (v: unknown) => (typeof v === 'number' ? `${v.toFixed(2)} GiB` : 'unknown');
      ctx.out(`available memory  ${gb(r.available_memory_gb)}  (posture ${r.posture})`);
      ctx.out(`cpus              ${r.cpu_count ?? 'unknown'}  load ${JSON.stringify(r.load_average)}`);
      ctx.out(
        `cap               ${r.cap} (${r.cap_source}; mem_term ${r.mem_term ?? '-'}, cpu_term ${r.cpu_term ?? '-'})`,
      );
      ctx.out(`running / queued  ${r.running} / ${r.queued}`);
      ctx.out(`learned costs     ${JSON.stringify(r.learned_costs)}`);
    });

  program
    .command('agents')
    .description('the named agents and where each came from')
    .option('--json', 'print JSON')
    .action(async (options) => {
      const { config } = loadConfig(ctx.crewHome);
      const loaded = await loadAgents({ crewHome: ctx.crewHome, projectDir: process.cwd(), config });
      if (options.json)
        ctx.out(JSON.stringify({ agents: [...loaded.agents.values()], problems: loaded.problems }, null, 2));
      else ctx.out(formatAgents(loaded));
    });
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
        running: 0,
        queued: 0,
      }),
    };
  } finally {
    await probe.close();
  }
}

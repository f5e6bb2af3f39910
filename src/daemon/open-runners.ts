import { AcpRunner } from '../runners/acp-runner.js';
import { CommandRunner } from '../runners/command-runner.js';
import { MemoryPauser } from '../runners/memory-pauser.js';
import { PausableCells } from '../runners/pausable-cells.js';
import type { Containment } from '../runners/run-cell.js';
import { Spawner } from '../runners/spawner.js';
import { FileTranscripts } from '../transcripts/file-transcripts.js';
import type { DaemonBase } from './daemon-parts.js';

export interface DaemonRunners {
  acp: AcpRunner;
  command: CommandRunner;
  transcripts: FileTranscripts;
  /** The memory pause (issue 28): command runs and dedicated ACP runs stop while memory is short. */
  pauser: MemoryPauser;
  /** `host.kill_grace_secs` in ms: how long a stopped agent has before it is killed. */
  killGraceMs: number;
  /** What starts command runs (`resource_status.spawner` reads it). */
  spawner: Spawner;
}

/** The real runners (ACP agents, plain commands) and the transcripts on disk they write. */
export function openRunners(base: DaemonBase, containment: Containment): DaemonRunners {
  const { config, clock, env, cleanups } = base;
  const killGraceMs = config['host.kill_grace_secs'] * 1000;
  // Runs of both runners are offered to the memory pause: command runs, and ACP runs on a dedicated runtime.
  const pausable = new PausableCells();
  const acp = new AcpRunner({
    clock,
    killGraceMs,
    permissionPolicy: config['agent.permission_policy'],
    requestTimeoutMs: config['agent.acp_request_timeout_secs'] * 1000,
    env,
    transcriptMaxBytes: config['agent.transcript_max_bytes'],
    oomScoreAdj: config['host.oom_score_adj'],
    containment,
    pausable,
  });
  const pauser = new MemoryPauser({
    cells: pausable,
    marginGb: config['agent.pause_margin_gb'],
    fallbackGb: config['agent.subagent_cost_gb'],
    log: base.log,
  });
  // Command runs start from a small helper process, not by forking the daemon (issue 32 §4): the native
  // one is built now, in the background, if this machine has none yet (runs before that use Node's).
  const spawner = new Spawner({ oomScoreAdj: config['host.oom_score_adj'], helper: config['host.spawner'] });
  void spawner.prepare();
  const command = new CommandRunner({
    clock,
    killGraceMs,
    oomScoreAdj: config['host.oom_score_adj'],
    containment,
    pausable,
    spawner,
  });
  // Closed after the gateway (cleanups run in reverse): the gateway's close lets runs end first; the
  // spawner after the runner whose runs it started.
  cleanups.add(
    () => spawner.close(),
    () => acp.close(),
    () => command.close(),
  );
  const transcripts = new FileTranscripts(base.crewHome, {
    maxBytes: config['agent.transcript_max_bytes'],
    clock,
    grepBudgetMs: config['agent.grep_budget_ms'],
  });
  // Its grep threads end after the gateway, which may still be answering a status call.
  cleanups.add(() => transcripts.close());
  return { acp, command, transcripts, pauser, killGraceMs, spawner };
}

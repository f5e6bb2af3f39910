import type { AgentDef } from '../core/agent-def.js';
import { cleanClientName } from '../core/client-name.js';
import type { CrewConfig } from '../core/config-schema.js';
import { CrewError } from '../core/errors.js';
import * as refusals from '../core/refusals.js';
import type { Scheduler } from '../core/scheduler.js';
import type {
  Conversation,
  KnownCommand,
  MemoryReading,
  SchedulerEvent,
  SchedulerReply,
  SpawnMember,
} from '../core/scheduler-types.js';
import { resolveMaxTokens, resolveMaxTurns } from '../core/turn-budget.js';
import { assertNever, type ParentKey, type RunId, type RunSpec } from '../core/types.js';
import { inheritWorkspace } from '../workspace/admission.js';
import type { SpawnResult } from './answers.js';
import { contextScopeOf } from './context-scope.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { StepExtra } from './gateway-step.js';
import type { Ids } from './ids.js';
import type { Placement } from './placement.js';
import { OneSpec } from './plan-transaction.js';
import type { ProviderFeed } from './provider-feed.js';
import { continueArgsSchema, parseArgs, type SpawnArgs } from './spawn-args.js';
import { validateSpawn } from './validate.js';
import type { Scope, Visibility } from './visibility.js';

/** What admissions are built from: the gateway's parts, made before its first admission. */
export interface AdmissionsDeps {
  config: CrewConfig;
  deps: GatewayDeps;
  scheduler: Scheduler;
  ids: Ids;
  providers: ProviderFeed;
  visibility: Visibility;
  placement: Placement;
  step: (event: SchedulerEvent, extra?: StepExtra) => SchedulerReply;
  agentsAt: (cwd: string | undefined) => ReadonlyMap<string, AgentDef>;
  memoryReading: () => MemoryReading | undefined;
  /** The gateway is closing: every admission is refused `shutting_down`. */
  closing: () => boolean;
}

/**
 * The gateway's admissions (issue 30: out of gateway.ts): parsed arguments become one scheduler event
 * (`spawn` or `continue`) with the specs it admits and the budgets resolved, stepped, and answered. The
 * gateway wraps each in its audit; a refusal found here is thrown as a CrewError.
 */
export class Admissions {
  constructor(private readonly d: AdmissionsDeps) {}

  /** `spawn_run` of parsed arguments (throws its refusal as a CrewError). */
  spawn(parent: ParentKey, args: SpawnArgs, parentCwd: string | undefined): SpawnResult {
    if (this.d.closing()) throw new CrewError(refusals.shuttingDown());
    const validated = validateSpawn(
      args,
      this.d.config,
      (cwd) => this.d.agentsAt(cwd),
      parentCwd ?? this.d.deps.defaultCwd,
      this.d.deps.workspaces,
    );
    const batchId = validated.wave ? this.d.ids.batch() : undefined;
    const parentName = this.parentNameOf(parent);
    // A single spawn's one spec needs no map (admission is the hot path); a wave's are in one.
    const single = validated.specs.length === 1;
    const waveSpecs = single ? undefined : new Map<RunId, RunSpec>();
    let singleSpec: OneSpec | undefined;
    // Every task of one spawn works in the same directory, so one look at its agents serves all.
    const agents = this.d.agentsAt(validated.specs[0]?.cwd);
    const members = validated.specs.map((spec): SpawnMember => {
      const id = this.d.ids.run();
      if (parentName !== undefined) spec.parentName = parentName;
      if (waveSpecs) waveSpecs.set(id, spec);
      else singleSpec = new OneSpec(id, spec);
      const member: SpawnMember = {
        id,
        agent: spec.agent,
        keep: spec.keep === true,
        maxTurns: this.maxTurnsOf(spec, agents),
        maxTokens: this.maxTokensOf(spec, agents),
      };
      const provider = this.d.providers.providerOf(agents.get(spec.agent));
      if (provider !== undefined) member.provider = provider;
      return member;
    });
    const commandId = validated.commandId;
    const known = commandId === undefined ? undefined : this.knownCommand(parent, commandId);
    // Assigned, not spread, for the same reason.
    const event: Extract<SchedulerEvent, { type: 'spawn' }> = { type: 'spawn', parent, members };
    if (batchId !== undefined) event.batchId = batchId;
    if (commandId !== undefined) event.commandId = commandId;
    if (known) event.known = known;
    const memory = this.d.memoryReading();
    if (memory) event.memory = memory;
    // One of the two is set: validation refuses a spawn with no task.
    const reply = this.d.step(event, { newSpecs: waveSpecs ?? singleSpec ?? new Map() });
    return withWarnings(this.spawnAnswer(reply), validated.warnings);
  }

  /** `spawn_continue`: a new turn in a kept conversation, admitted like any run (throws its refusal). */
  continue(parent: ParentKey, rawArgs: unknown, scope: Scope): SpawnResult {
    {
      if (this.d.closing()) throw new CrewError(refusals.shuttingDown());
      const args = parseArgs(continueArgsSchema, rawArgs);
      const found = this.d.scheduler.conversation(args.conversation);
      const foundAnywhere = found ?? this.d.deps.store.conversation(args.conversation);
      if (foundAnywhere) this.d.visibility.assertVisible(scope, foundAnywhere.latestRunId);
      // An idle conversation whose session's host is gone (cluster mode) is released first.
      const gone = found?.state === 'idle' ? this.releaseIfHostGone(found) : undefined;
      const live = gone ? undefined : found;
      const stored = live ? undefined : (gone ?? foundAnywhere);
      const conversation = live ?? stored;
      const base = conversation ? this.d.deps.store.run(conversation.latestRunId)?.spec : undefined;
      const agent = args.agent ?? conversation?.agent ?? this.d.config['agent.default_agent'];
      const validated = validateSpawn(
        {
          task: args.task,
          agent,
          ...(args.max_turns !== undefined ? { max_turns: args.max_turns } : {}),
          ...(args.max_tokens !== undefined ? { max_tokens: args.max_tokens } : {}),
          ...(args.model !== undefined ? { model: args.model } : {}),
        },
        this.d.config,
        (cwd) => this.d.agentsAt(cwd),
        base?.cwd ?? this.d.deps.defaultCwd,
        this.d.deps.workspaces,
      );
      const parentName = this.parentNameOf(parent);
      const spec = {
        ...validated.specs[0],
        ...contextScopeOf(base),
        keep: true,
        ...inheritWorkspace(base),
        ...(parentName !== undefined ? { parentName } : {}),
      } as RunSpec;
      const id = this.d.ids.run();
      const known = args.command_id === undefined ? undefined : this.knownCommand(parent, args.command_id);
      const memory = this.d.memoryReading();
      const reply = this.d.step(
        {
          type: 'continue',
          parent,
          conversationId: args.conversation,
          id,
          maxTurns: this.maxTurnsOf(spec),
          maxTokens: this.maxTokensOf(spec),
          ...(args.command_id !== undefined ? { commandId: args.command_id } : {}),
          ...(known ? { known } : {}),
          ...(stored ? { stored } : {}),
          ...(memory ? { memory } : {}),
        },
        { newSpecs: new OneSpec(id, spec) },
      );
      return withWarnings(this.spawnAnswer(reply), validated.warnings);
    }
  }

  /** The parent's client name to keep with its runs (cleaned here, where it is stored: see `RunSpec.parentName`). */
  private parentNameOf(parent: ParentKey): string | undefined {
    const lookup = this.d.deps.parentNameOf;
    return lookup ? cleanClientName(lookup(parent)) : undefined;
  }

  /** Released when the placement lost its session (its host is gone), so continuing it answers `conversation_released`. */
  private releaseIfHostGone(conversation: Conversation): Conversation | undefined {
    const reason = this.d.placement.sessionLost(conversation.id);
    if (reason === undefined) return undefined;
    const reply = this.d.step({ type: 'release', conversationId: conversation.id, reason });
    return reply.ok ? { ...conversation, state: 'released', releasedReason: reason } : undefined;
  }

  /**
   * Admits one top-level run whose spec and budgets an admission elsewhere already resolved (a job another
   * gateway placed here), under `parent`, with `id` as its own command id so the same request twice admits
   * once. With `continues`, it is the next turn of that kept conversation.
   */
  admitResolved(
    parent: ParentKey,
    id: RunId,
    spec: RunSpec,
    budget: { maxTurns?: number; maxTokens?: number },
    continues?: string,
  ): SchedulerReply {
    if (this.d.closing()) return { kind: 'refused', ok: false, refusal: refusals.shuttingDown() };
    const known = this.knownOf(parent, id);
    const newSpecs = { newSpecs: new OneSpec(id, spec) };
    if (continues !== undefined) {
      const stored = this.d.scheduler.conversation(continues)
        ? undefined
        : this.d.deps.store.conversation(continues);
      const event = { type: 'continue' as const, parent, conversationId: continues, id, commandId: id };
      return this.d.step({ ...event, ...budget, ...known, ...(stored ? { stored } : {}) }, newSpecs);
    }
    const provider = this.d.providers.providerOf(this.d.agentsAt(spec.cwd).get(spec.agent));
    const member = { id, agent: spec.agent, keep: spec.keep === true, ...budget };
    const members = [provider !== undefined ? { ...member, provider } : member];
    return this.d.step({ type: 'spawn', parent, members, commandId: id, ...known }, newSpecs);
  }

  /** What the store holds for a command id the scheduler no longer knows (its runs ended, or a restart). */
  private knownCommand(parent: ParentKey, commandId: string): KnownCommand | undefined {
    if (this.d.scheduler.knowsCommand(parent, commandId)) return undefined;
    const records = this.d.deps.store.runs({ commandId }).filter((r) => r.run.parent === parent);
    if (records.length === 0) return undefined;
    const runs = records.map((r) => r.run).sort((a, b) => a.seq - b.seq);
    return {
      runIds: runs.map((r) => r.id),
      ...(runs[0]?.batchId !== undefined ? { batchId: runs[0].batchId } : {}),
    };
  }

  knownOf(parent: ParentKey, commandId: string): { known?: KnownCommand } {
    const known = this.knownCommand(parent, commandId);
    return known ? { known } : {};
  }

  private maxTurnsOf(spec: RunSpec, agents = this.d.agentsAt(spec.cwd)): number {
    return resolveMaxTurns(spec.maxTurns, agents.get(spec.agent)?.max_turns, this.d.config);
  }

  private maxTokensOf(spec: RunSpec, agents = this.d.agentsAt(spec.cwd)): number {
    return resolveMaxTokens(spec.maxTokens, agents.get(spec.agent)?.max_tokens, this.d.config);
  }

  private spawnAnswer(reply: SchedulerReply): SpawnResult {
    switch (reply.kind) {
      case 'refused':
        return { ok: false, refusal: reply.refusal };
      case 'done':
        return { ok: true, runs: [] };
      case 'admitted': {
        const runs = reply.runs.map((r) => {
          // A repeated command id answers with where its runs are now.
          const status = reply.existing
            ? (this.d.scheduler.liveRun(r.id)?.status ?? this.d.deps.store.run(r.id)?.run.status ?? r.status)
            : r.status;
          return { id: r.id, status, ...(r.position !== undefined ? { position: r.position } : {}) };
        });
        return { ok: true, ...(reply.batchId !== undefined ? { batch_id: reply.batchId } : {}), runs };
      }
      default:
        return assertNever(reply);
    }
  }
}

/** Warnings (an agent that cannot honour a model or effort) ride on a successful answer. */
function withWarnings(answer: SpawnResult, warnings: readonly string[]): SpawnResult {
  return answer.ok && warnings.length > 0 ? { ...answer, warnings: [...warnings] } : answer;
}

import { Scheduler } from '../../src/core/scheduler.js';
import type { SchedulerCommand, SchedulerEvent, SchedulerLimits } from '../../src/core/scheduler-types.js';
import { isTerminal, type Run, withEveryField } from '../../src/core/types.js';
import type { Store, StoreTx } from '../../src/store/store.js';

/**
 * Drives the pure scheduler the way the gateway does (carrying out launch / stop commands as a runner
 * would) and checks DESIGN §3's invariants after every step against a simple model.
 */
/**
 * The fields of every run the scheduler hands out, in order: one shape for every run and every state of
 * it, which keeps the hot paths monomorphic (see `RunBase`). A field added to a state after the fact fails
 * the check below.
 */
const RUN_SHAPE = Object.keys(
  withEveryField({
    id: 'r',
    status: 'queued',
    parent: 'mcp:p',
    agent: 'a',
    depth: 1,
    rootId: 'r',
    keep: false,
    createdAt: 0,
    seq: 0,
  }),
).join(',');

export class Harness {
  scheduler: Scheduler;
  /** When set, every step's records go to this store, as the gateway writes them (restart tests). */
  store: Store | undefined;
  private epoch = 0;
  now = 0;
  private nextId = 1;
  private nextBatch = 1;
  /** Latest record of every admitted run. */
  readonly runs = new Map<string, Run>();
  readonly launched = new Set<string>();
  readonly startedIds = new Set<string>();
  /** Runs a stop was asked for and the "runner" has not confirmed yet. */
  readonly stopping = new Set<string>();
  readonly terminalCount = new Map<string, number>();
  readonly announcedCount = new Map<string, number>();
  readonly parentsOfEvents = new Map<string, string>();
  /** The model's FIFO queue of top-level runs. */
  readonly modelQueue: string[] = [];
  readonly cancelledWhileQueued = new Set<string>();
  /** The first stop the scheduler asked for each run: it must decide the run's terminal status. */
  readonly stopCause = new Map<string, string>();
  readonly toolCalls = new Map<string, number>();
  /** Tokens counted per run (what the provider gateway reported). */
  readonly counted = new Map<string, number>();
  violations: string[] = [];

  constructor(readonly limits: SchedulerLimits) {
    this.scheduler = new Scheduler(limits);
  }

  /** Whether a top-level run of `parent` starts here (`SchedulerLimits.startsHere`; default yes). */
  private startsHere(parent: string | undefined): boolean {
    return parent === undefined || (this.limits.startsHere?.(parent) ?? true);
  }

  id(): string {
    return `r${this.nextId++}`;
  }
  batch(): string {
    return `w${this.nextBatch++}`;
  }

  live(filter: (run: Run) => boolean = () => true): Run[] {
    return [...this.runs.values()].filter((r) => !isTerminal(r.status) && filter(r));
  }

  step(event: SchedulerEvent) {
    const permitsBefore = new Map(this.scheduler.permitHolders());
    const result = this.scheduler.step(event, this.now);
    for (const command of result.commands) this.observe(command);
    this.persist(result.commands, event.type === 'restore' ? event.executing.map((r) => r.id) : []);
    if (event.type === 'steer') {
      const after = this.scheduler.permitHolders();
      if (after.size !== permitsBefore.size) this.fail('steering changed the permits');
    }
    this.check();
    return result;
  }

  /** Attaches a store (fresh epoch) and writes what the scheduler decided into it from now on. */
  useStore(store: Store): void {
    this.store = store;
    this.epoch = store.nextEpoch();
  }

  /**
   * A new gateway process on the same store: a fresh scheduler restores what the store holds. The
   * previous process's runners are gone, so nothing it launched can report any more.
   */
  restart(): void {
    const store = this.store;
    if (!store) throw new Error('restart needs a store');
    this.scheduler = new Scheduler(this.limits);
    this.epoch = store.nextEpoch();
    this.stopping.clear();
    this.stopCause.clear();
    this.counted.clear();
    const state = store.restartState();
    // A run that held a permit but was never launched (the stagger) queues again, in admission order.
    const unlaunched = state.executing
      .map((r) => r.run)
      .filter((run) => run.status === 'starting' && run.launchedAt === undefined);
    this.modelQueue.length = 0;
    this.modelQueue.push(...[...state.queued, ...unlaunched].sort((a, b) => a.seq - b.seq).map((r) => r.id));
    this.step({
      type: 'restore',
      queued: state.queued,
      executing: state.executing.map((r) => r.run),
      waves: state.waves,
      nextSeq: state.nextSeq,
    });
  }

  private persist(commands: SchedulerCommand[], claim: string[]): void {
    if (!this.store) return;
    const tx: StoreTx = { epoch: this.epoch, newRuns: [], runs: [], outbox: [], claim };
    for (const command of commands) {
      if (command.type === 'persist') {
        if (this.store.run(command.run.id) || tx.newRuns?.some((n) => n.run.id === command.run.id))
          tx.runs?.push(command.run);
        else tx.newRuns?.push({ run: command.run, spec: { task: 'x', agent: command.run.agent } });
      } else if (command.type === 'announce') {
        const a = command.announcement;
        tx.outbox?.push({
          id: `e${this.eventSeq++}`,
          parent: a.parent,
          kind: a.kind,
          runIds: a.kind === 'digest' ? a.runIds : [a.runId],
          ...(a.kind === 'digest' ? { batchId: a.batchId } : {}),
          createdAt: this.now,
          state: 'pending',
          attempts: 0,
        });
      }
    }
    this.store.apply(tx);
  }

  private eventSeq = 0;

  private observe(command: SchedulerCommand): void {
    switch (command.type) {
      case 'persist': {
        const run = command.run;
        const shape = Object.keys(run).join(',');
        if (shape !== RUN_SHAPE)
          this.fail(`run ${run.id} (${run.status}) has the fields ${shape}, not ${RUN_SHAPE}`);
        const previous = this.runs.get(run.id);
        if (previous && isTerminal(previous.status)) this.fail(`run ${run.id} changed after it ended`);
        if (!previous && run.status === 'queued' && run.depth === 1) this.modelQueue.push(run.id);
        if (previous?.status === 'queued' && run.status === 'starting') {
          // One order per kind: runs that start here, and (cluster mode) runs that start elsewhere, which
          // may pass a run here that the reservation gate holds back.
          const here = this.startsHere(run.parent);
          const at = this.modelQueue.findIndex((id) => this.startsHere(this.runs.get(id)?.parent) === here);
          if (this.modelQueue[at] !== run.id) {
            this.fail(`FIFO broken: ${run.id} got a permit while ${this.modelQueue[at]} was ahead`);
          }
          const queued = this.modelQueue.indexOf(run.id);
          if (queued >= 0) this.modelQueue.splice(queued, 1);
        }
        if (!previous && run.status === 'queued' && run.depth > 1) this.fail(`nested run ${run.id} queued`);
        if (!previous && run.parent.startsWith('run:')) this.checkNarrowed(run);
        if (isTerminal(run.status)) {
          this.terminalCount.set(run.id, (this.terminalCount.get(run.id) ?? 0) + 1);
          this.checkOutcome(run);
          if (previous?.status === 'queued') {
            const at = this.modelQueue.indexOf(run.id);
            if (at >= 0) this.modelQueue.splice(at, 1);
            this.cancelledWhileQueued.add(run.id);
          }
          this.stopping.delete(run.id);
        }
        this.runs.set(run.id, run);
        break;
      }
      case 'launch':
        if (this.cancelledWhileQueued.has(command.runId))
          this.fail(`cancelled queued run ${command.runId} launched`);
        if (this.launched.has(command.runId)) this.fail(`run ${command.runId} launched twice`);
        this.launched.add(command.runId);
        break;
      case 'stop':
        this.stopping.add(command.runId);
        if (!this.stopCause.has(command.runId)) this.stopCause.set(command.runId, command.reason);
        break;
      case 'announce': {
        const a = command.announcement;
        const members = a.kind === 'digest' ? a.runIds : [a.runId];
        for (const id of members) {
          this.announcedCount.set(id, (this.announcedCount.get(id) ?? 0) + 1);
          const run = this.runs.get(id);
          if (!run || !isTerminal(run.status)) this.fail(`run ${id} announced before it ended`);
        }
        break;
      }
      default:
        break;
    }
  }

  /** A run's tool call; at its budget the same step must ask for a turn-limit stop (unless one was asked). */
  toolCall(runId: string): void {
    const run = this.runs.get(runId);
    const causeBefore = this.stopCause.get(runId);
    const n = (this.toolCalls.get(runId) ?? 0) + 1;
    this.toolCalls.set(runId, n);
    this.step({ type: 'tool_call', runId });
    const budget = run?.maxTurns ?? 0;
    const asked = this.stopCause.get(runId);
    if (budget > 0 && n >= budget && causeBefore === undefined && asked !== 'turn_limit')
      this.fail(`run ${runId} reached its budget ${budget} and was not stopped turn_limit`);
    if ((budget === 0 || n < budget) && causeBefore === undefined && asked !== undefined)
      this.fail(`run ${runId} stopped (${asked}) by a tool call under its budget`);
  }

  /**
   * A model call's tokens: once the run's count passes its budget the same step must ask for a
   * token-budget stop (unless a stop was asked already); under it, no stop.
   */
  tokens(runId: string, tokens: number): void {
    const run = this.runs.get(runId);
    const causeBefore = this.stopCause.get(runId);
    const n = (this.counted.get(runId) ?? 0) + tokens;
    this.counted.set(runId, n);
    this.step({ type: 'tokens', runId, tokens });
    const budget = run?.maxTokens ?? 0;
    const asked = this.stopCause.get(runId);
    if (budget > 0 && n > budget && causeBefore === undefined && asked !== 'token_budget')
      this.fail(
        `run ${runId} counted ${n} tokens past its budget ${budget} and was not stopped token_budget`,
      );
    if ((budget === 0 || n <= budget) && causeBefore === undefined && asked !== undefined)
      this.fail(`run ${runId} stopped (${asked}) by tokens within its budget`);
  }

  /** A nested run's token budget is never more than what each live ancestor had left (at least 1). */
  private checkNarrowed(run: Run): void {
    for (let at = this.runs.get(run.parent.slice('run:'.length)); at; ) {
      const budget = at.maxTokens ?? 0;
      if (budget > 0) {
        const left = Math.max(1, budget - (this.counted.get(at.id) ?? 0));
        if ((run.maxTokens ?? 0) === 0 || (run.maxTokens ?? 0) > left)
          this.fail(
            `nested ${run.id} got token budget ${run.maxTokens ?? 0} though ${at.id} had ${left} left`,
          );
      }
      at = at.parent.startsWith('run:') ? this.runs.get(at.parent.slice('run:'.length)) : undefined;
    }
  }

  /** The terminal status follows the first stop asked: cancel, timeout, turn_limit, token_budget. */
  private checkOutcome(run: Run): void {
    const cause = this.stopCause.get(run.id);
    if (cause === undefined || run.status === 'lost' || run.status === 'failed') return;
    const expected = {
      cancel: 'cancelled',
      timeout: 'timed_out',
      turn_limit: 'completed',
      token_budget: 'completed',
    }[cause];
    if (run.status !== expected) this.fail(`run ${run.id} stopped for ${cause} ended ${run.status}`);
    if ((cause === 'turn_limit' || cause === 'token_budget') && !('stop' in run && run.stop === cause))
      this.fail(`run ${run.id} ended by its ${cause} lacks stop ${cause}`);
  }

  check(): void {
    const permits = this.scheduler.permitHolders();
    if (permits.size > this.limits.cap) this.fail(`permits ${permits.size} > cap ${this.limits.cap}`);
    const liveRoots = new Set(this.live().map((r) => r.rootId));
    for (const holder of permits.keys()) {
      const run = this.runs.get(holder);
      if (run?.depth !== 1) this.fail(`permit held by non-top-level ${holder}`);
      if (!liveRoots.has(holder)) this.fail(`permit of ${holder} kept after its tree ended`);
    }
    for (const run of this.live()) {
      if (run.depth === 1 && run.status !== 'queued' && !permits.has(run.id))
        this.fail(`${run.id} executes without a permit`);
      if (run.depth > 1 && !permits.has(run.rootId))
        this.fail(`nested ${run.id}'s root ${run.rootId} holds no permit`);
    }
    for (const [id, n] of this.terminalCount) if (n > 1) this.fail(`run ${id} ended ${n} times`);
    for (const [id, n] of this.announcedCount) if (n > 1) this.fail(`run ${id} announced ${n} times`);
  }

  /** Ends everything: confirms stops, ends launched runs, lets the stagger pass; then checks the end state. */
  finish(): void {
    for (let round = 0; round < 1000 && this.live().length > 0; round++) {
      for (const run of this.live()) {
        if (run.status === 'queued') continue;
        if (this.launched.has(run.id)) {
          this.step({
            type: 'ended',
            runId: run.id,
            status: this.stopping.has(run.id) ? 'cancelled' : 'completed',
          });
        }
      }
      this.now += Math.max(1, this.limits.staggerMs);
      this.step({ type: 'tick' });
    }
    for (const [id, run] of this.runs) {
      if (!isTerminal(run.status)) this.fail(`run ${id} never ended (${run.status})`);
      if ((this.terminalCount.get(id) ?? 0) !== 1)
        this.fail(`run ${id} ended ${this.terminalCount.get(id) ?? 0} times`);
      if ((this.announcedCount.get(id) ?? 0) !== 1)
        this.fail(`run ${id} announced ${this.announcedCount.get(id) ?? 0} times`);
    }
    if (this.scheduler.permitHolders().size !== 0) this.fail('permits remain after everything ended');
  }

  private fail(message: string): void {
    this.violations.push(message);
  }
}

import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isTerminal, type ParentKey, type RunStatus } from '../core/types.js';
import type { Gateway } from '../gateway/gateway.js';
import type { DeliveredEvent } from '../gateway/relay.js';
import { toolResult } from './call-tool.js';
import { TOOLS } from './tools.js';

/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, MCP 2026-07-28) for `spawn_sub_agents`: the call
 * admits the wave and answers with a task at once; `tasks/get` polls it. The MCP SDK has no runtime for
 * the extension, so this is Crew's own.
 *
 * Delivered means seen, as everywhere: a poll takes the parent's events from the outbox (which marks them
 * delivered) only once every run of the wave has ended, and puts them, the wave's digest among them, in
 * the task's `result`, the tool result the client reads. A poll while the wave runs takes nothing. A
 * cancelled task carries no result, so its wave's digest stays owed to the parent (`spawn_wait` returns it).
 *
 * Bounded: at most `max` tasks; an ended task is forgotten `ttlMs` after it ended, and past the bound the
 * oldest ended one goes first. Expiry is checked when tasks are touched, so there is no timer to clear.
 */

export type TaskStatus = 'working' | 'completed' | 'cancelled';

/** The task as the wire carries it (`Task` of the extension). */
export interface TaskView {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

interface WaveTask {
  id: string;
  parent: ParentKey;
  batchId: string;
  runIds: string[];
  status: TaskStatus;
  createdAt: number;
  updatedAt: number;
  /** Events this task took from the outbox (delivered by being returned in its result). */
  taken: DeliveredEvent[];
  result?: CallToolResult;
  /** A poll settling the task; a second poll meanwhile waits for it instead of taking events too. */
  settling?: Promise<void> | undefined;
}

export interface WaveTasksOptions {
  /** How long an ended task stays readable. @default 3_600_000 */
  ttlMs?: number;
  /** Tasks kept at most. @default 1024 */
  max?: number;
  /** What a client is told to wait between polls. @default 2000 */
  pollIntervalMs?: number;
  /** Longest a poll waits for the digest of a wave whose runs have all ended. @default 2000 */
  settleMs?: number;
}

export class WaveTasks {
  private readonly tasks = new Map<string, WaveTask>();
  private readonly ttlMs: number;
  private readonly max: number;
  private readonly pollIntervalMs: number;
  private readonly settleMs: number;

  constructor(
    private readonly gateway: Gateway,
    options: WaveTasksOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 3_600_000;
    this.max = options.max ?? 1024;
    this.pollIntervalMs = options.pollIntervalMs ?? 2000;
    this.settleMs = options.settleMs ?? 2000;
  }

  get size(): number {
    return this.tasks.size;
  }

  /** A task for an admitted wave, readable at once (the extension's durable create). */
  create(parent: ParentKey, batchId: string, runIds: string[]): TaskView {
    this.expire();
    const now = this.gateway.now();
    const task: WaveTask = {
      id: randomUUID(),
      parent,
      batchId,
      runIds,
      status: 'working',
      createdAt: now,
      updatedAt: now,
      taken: [],
    };
    this.tasks.set(task.id, task);
    while (this.tasks.size > this.max) this.evictOne(task.id);
    return this.view(task);
  }

  /**
   * The task now, settled first when its wave has ended; `undefined` for an id this parent has no task
   * under (another parent's task is as unknown as a made-up id).
   */
  async get(id: string, parent: ParentKey): Promise<{ task: TaskView; result?: CallToolResult } | undefined> {
    this.expire();
    const task = this.own(id, parent);
    if (!task) return undefined;
    if (task.status === 'working' && this.waveEnded(task)) {
      task.settling ??= this.settle(task).finally(() => {
        task.settling = undefined;
      });
      await task.settling;
    }
    return { task: this.view(task), ...(task.result ? { result: task.result } : {}) };
  }

  /** Cancels a working task's runs; `false` for an unknown id. An ended task is left as it is. */
  cancel(id: string, parent: ParentKey): boolean {
    this.expire();
    const task = this.own(id, parent);
    if (!task) return false;
    if (task.status !== 'working') return true;
    for (const runId of task.runIds) this.gateway.cancel(runId, { kind: 'parent', parent });
    task.status = 'cancelled';
    task.updatedAt = this.gateway.now();
    return true;
  }

  private own(id: string, parent: ParentKey): WaveTask | undefined {
    const task = this.tasks.get(id);
    return task && task.parent === parent ? task : undefined;
  }

  private waveEnded(task: WaveTask): boolean {
    const views = this.gateway.views(task.runIds, { kind: 'parent', parent: task.parent });
    return views.length === task.runIds.length && views.every((v) => isTerminal(v.status as RunStatus));
  }

  /** Takes the parent's events until the wave's digest is among them, at most `settleMs`. */
  private async settle(task: WaveTask): Promise<void> {
    const deadline = this.gateway.now() + this.settleMs;
    while (!task.taken.some((e) => e.batch_id === task.batchId)) {
      const left = deadline - this.gateway.now();
      if (left <= 0) return;
      for (const event of await this.gateway.waitForEvents(task.parent, left)) this.file(task, event);
    }
    const statuses = new Map(
      this.gateway.views(task.runIds, { kind: 'parent', parent: task.parent }).map((v) => [v.id, v.status]),
    );
    const body = {
      ok: true,
      batch_id: task.batchId,
      runs: task.runIds.map((id) => ({ id, status: statuses.get(id) ?? 'unknown' })),
      done: true,
      events: task.taken,
    };
    task.result = toolResult(body, SUB_AGENTS_TEXT);
    task.taken = [];
    task.status = 'completed';
    task.updatedAt = this.gateway.now();
  }

  /**
   * An event a poll took goes to the task of its wave when another working task of this parent has that
   * wave (its client reads it there), else into this task's result.
   */
  private file(task: WaveTask, event: DeliveredEvent): void {
    for (const other of this.tasks.values()) {
      if (other !== task && other.status === 'working' && other.parent === task.parent) {
        if (event.batch_id !== undefined && other.batchId === event.batch_id) {
          other.taken.push(event);
          return;
        }
      }
    }
    task.taken.push(event);
  }

  private view(task: WaveTask): TaskView {
    return {
      taskId: task.id,
      status: task.status,
      ...(task.status === 'working'
        ? { statusMessage: `wave ${task.batchId}: ${task.runIds.length} runs; poll tasks/get` }
        : {}),
      createdAt: new Date(task.createdAt).toISOString(),
      lastUpdatedAt: new Date(task.updatedAt).toISOString(),
      ttlMs: this.ttlMs,
      pollIntervalMs: this.pollIntervalMs,
    };
  }

  /** Ended tasks past their TTL are forgotten (insertion order is creation order). */
  private expire(): void {
    const now = this.gateway.now();
    for (const [id, task] of this.tasks) {
      if (task.status !== 'working' && task.updatedAt + this.ttlMs <= now) this.tasks.delete(id);
    }
  }

  /** The oldest ended task, else the oldest working one (its digest then waits for spawn_wait). */
  private evictOne(keep: string): void {
    let victim: string | undefined;
    for (const [id, task] of this.tasks) {
      if (id === keep) continue;
      if (task.status !== 'working') {
        victim = id;
        break;
      }
      victim ??= id;
    }
    if (victim !== undefined) this.tasks.delete(victim);
  }
}

const SUB_AGENTS_TEXT = TOOLS.find((t) => t.name === 'spawn_sub_agents')?.text;

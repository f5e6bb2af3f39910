/**
 * Crew as a library: an in-process gateway (`createGateway`) with the admission core, ports and their
 * in-memory adapters. Adapters that pull in native or heavy modules live at subpaths:
 * `crew/sqlite` (the SQLite store), `crew/daemon` (the HTTP daemon), `crew/host` (probes and the cap),
 * `crew/runners` (the ACP and command runners, which start processes).
 */

export { FakeClock } from './clock/fake-clock.js';
export { realClock } from './clock/real-clock.js';
export type { AgentDef } from './core/agent-def.js';
export { computeCap, memoryPosture } from './core/cap.js';
export type { Clock } from './core/clock.js';
export {
  CONFIG_KEYS,
  type ConfigKey,
  type ConfigProblem,
  type CrewConfig,
  defaultConfig,
  parseConfig,
} from './core/config-schema.js';
export {
  CrewError,
  CrewFault,
  type ErrorCode,
  errorCodeOf,
  FAULT_CODES,
  type FaultCode,
  isCrewError,
  isCrewFault,
  REFUSAL_CODES,
  type Refusal,
  type RefusalCode,
} from './core/errors.js';
export { redact, taskPreview } from './core/redact.js';
export { Scheduler } from './core/scheduler.js';
export type {
  SchedulerCommand,
  SchedulerEvent,
  SchedulerLimits,
  SchedulerReply,
} from './core/scheduler-types.js';
export { truncate } from './core/truncate.js';
export type * from './core/types.js';
export { type CreateGatewayDeps, createGateway } from './gateway/create-gateway.js';
export type {
  Answer,
  Gateway,
  GatewayCounts,
  ListResult,
  Scope,
  SpawnResult,
  StatusResult,
} from './gateway/gateway.js';
export type { RunView } from './gateway/run-view.js';
export type { DeliveredEvent, Sink } from './gateway/sink.js';
export { FakeRunner } from './runners/fake-runner.js';
export type { RunHandle, Runner, RunnerEvent, RunRequest } from './runners/runner.js';
export { MemorySelSink } from './sel/memory-sel-sink.js';
export type { SelEvent } from './sel/sel-event.js';
export type { SelSink } from './sel/sel-sink.js';
export { MemoryStore } from './store/memory-store.js';
export type { OutboxEvent, RunRecord, Store } from './store/store.js';

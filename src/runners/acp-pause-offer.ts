import type { Clock } from '../core/clock.js';
import type { AcpRuntime } from './acp-runtime.js';
import type { PausableCells } from './pausable-cells.js';

/**
 * Offers a run's dedicated runtime to the memory pause (`memory-pauser.ts`) for as long as the run lasts,
 * from the moment its process exists (a pause may fall before `initialize`: the runtime's request timeouts
 * stand still while it is stopped). Returns the withdrawal, idempotent: it takes the offer back and
 * continues a runtime still paused, since a kept conversation's process outlives its run and nobody would
 * resume it. A shared or hosted runtime is never offered: it serves other sessions (`pausable-cells.ts`).
 */
export function offerToPause(
  cells: PausableCells | undefined,
  offer: { runId: string; agent: string; runtime: AcpRuntime; clock: Clock },
): () => void {
  if (cells === undefined) return () => {};
  const { runId, runtime } = offer;
  const entry = { cell: runtime, agent: offer.agent, startedAt: offer.clock.now() };
  cells.add(runId, entry);
  return () => {
    if (cells.get(runId) === entry) cells.delete(runId);
    if (runtime.isPaused) runtime.pause(false);
  };
}

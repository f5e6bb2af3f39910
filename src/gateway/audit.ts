import type { Refusal } from '../core/errors.js';
import { codeOfOutcome, refusalOutcome, type SelOutcome } from '../sel/sel-event.js';
import { refusalOf } from './answers.js';
import type { GatewayDeps } from './gateway-deps.js';

/** Where a SEL line comes from. */
export interface SelWhere {
  event_type: string;
  source: string;
  tool_name: string;
}

const ADMISSION: SelWhere = { event_type: 'admission', source: 'gateway', tool_name: 'spawn_run' };

/**
 * The gateway's security event log writer: every refusal is written once, by whoever saw it first (an
 * edge, the core, or the API call that answered it), and told to the watchers. A failing SEL write never
 * fails a call; it is said in the log.
 */
export class Auditor {
  /** Refusal lines written so far: an answer's refusal is audited only if nothing on its way wrote one. */
  private refusalLines = 0;

  constructor(
    private readonly deps: {
      sel: GatewayDeps['sel'];
      log: (line: string) => void;
      /** A refusal was written (the dashboard's live view hears of it). */
      onRefusal: (outcome: SelOutcome, metadata: Record<string, unknown>) => void;
    },
  ) {}

  /** Runs one API call; a refusal that nothing on its way wrote to the SEL is written once here. */
  audited<T extends { ok: boolean; refusal?: Refusal }>(tool: string, source: string, fn: () => T): T {
    const before = this.refusalLines;
    let result: T;
    try {
      result = fn();
    } catch (error) {
      result = refusalOf(error) as T;
    }
    if (!result.ok && result.refusal && this.refusalLines === before)
      this.audit(result.refusal, { source, tool_name: tool });
    return result;
  }

  /** The same for an asynchronous call whose answer is a value, never thrown. */
  async auditedAsync<T extends { ok: boolean; refusal?: Refusal }>(
    tool: string,
    source: string,
    fn: () => Promise<T>,
  ): Promise<T> {
    const before = this.refusalLines;
    const result = await fn();
    if (!result.ok && result.refusal && this.refusalLines === before)
      this.audit(result.refusal, { source, tool_name: tool });
    return result;
  }

  /** Writes the one SEL line of a refusal: `refused_<code>` with the code, path and numbers. */
  audit(
    refusal: Refusal,
    where: { source: string; tool_name: string; event_type?: string; metadata?: Record<string, unknown> },
  ): void {
    this.write(
      refusalOutcome(refusal.code),
      {
        ...(refusal.path !== undefined ? { path: refusal.path } : {}),
        ...(refusal.limit !== undefined ? { limit: refusal.limit } : {}),
        ...(refusal.current !== undefined ? { current: refusal.current } : {}),
        message: refusal.message,
        ...where.metadata,
      },
      { event_type: where.event_type ?? 'admission', source: where.source, tool_name: where.tool_name },
    );
  }

  write(outcome: SelOutcome, given: Record<string, unknown>, where: SelWhere = ADMISSION): void {
    const code = codeOfOutcome(outcome);
    const metadata = code === undefined ? given : { code, ...given };
    if (code !== undefined) {
      this.refusalLines++;
      this.deps.onRefusal(outcome, metadata);
    }
    try {
      // Fields assigned, not spread: this runs for every admission.
      this.deps.sel.write({
        event_type: where.event_type,
        source: where.source,
        tool_name: where.tool_name,
        outcome,
        metadata,
      });
    } catch (error) {
      // A failing SEL write never fails a spawn; it is said once.
      this.deps.log(
        `crew: writing the security event log failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}

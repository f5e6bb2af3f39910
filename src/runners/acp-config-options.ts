import type * as acp from '@agentclientprotocol/sdk';
import { CrewFault } from '../core/errors.js';
import type { Placement } from './acp-run.js';

/**
 * Model and reasoning effort through the agent's session config options (DESIGN §6:
 * `session/set_config_option` when advertised): finding the option and the value to send (pure), and
 * sending it.
 */

export type ConfigTarget = 'model' | 'effort';

const EFFORT_IDS = ['effort', 'reasoning_effort', 'reasoning', 'thought_level'];

/** The select option that sets `target`: by category (`model`, `thought_level`), else by a known id. */
export function findConfigOption(
  options: readonly acp.SessionConfigOption[] | null | undefined,
  target: ConfigTarget,
): Extract<acp.SessionConfigOption, { type: 'select' }> | undefined {
  const selects = (options ?? []).filter(
    (o): o is Extract<acp.SessionConfigOption, { type: 'select' }> => o.type === 'select',
  );
  const category = target === 'model' ? 'model' : 'thought_level';
  return (
    selects.find((o) => o.category === category) ??
    selects.find((o) => (target === 'model' ? o.id === 'model' : EFFORT_IDS.includes(o.id)))
  );
}

/**
 * The option value for `wanted`: an offered value equal to it, else one whose name matches it
 * (ignoring case), else `wanted` itself for the agent to judge.
 */
export function configValueFor(
  option: Extract<acp.SessionConfigOption, { type: 'select' }>,
  wanted: string,
): string {
  const values = option.options.flatMap((entry) => ('group' in entry ? entry.options : [entry]));
  const lower = wanted.toLowerCase();
  return (
    values.find((v) => v.value === wanted)?.value ??
    values.find((v) => v.name.toLowerCase() === lower || v.value.toLowerCase() === lower)?.value ??
    wanted
  );
}

/**
 * Sets `model` and `effort` on the placement's session where the agent offers an option for them (and
 * the value is not already current). Throws with the reason when the agent rejects a value. Returns the
 * targets it could not set because the agent offers no option for them: unless the agent's argv took
 * them, they are dropped, and the caller says so ({@link unhonouredWarnings}).
 */
export async function applyModelAndEffort(
  placement: Placement,
  model: string | undefined,
  effort: string | undefined,
): Promise<ConfigTarget[]> {
  const missing: ConfigTarget[] = [];
  for (const [target, wanted] of [
    ['model', model],
    ['effort', effort],
  ] as const) {
    if (wanted === undefined) continue;
    const option = findConfigOption(placement.configOptions, target);
    if (!option) {
      missing.push(target);
      continue;
    }
    const value = configValueFor(option, wanted);
    if (option.currentValue === value) continue;
    try {
      placement.configOptions = await placement.runtime.setConfigOption(
        placement.sessionId,
        option.id,
        value,
      );
    } catch (error) {
      // The agent answered a protocol request with an error: `runtime_died`'s case.
      throw new CrewFault(
        'runtime_died',
        `could not set ${target} to "${wanted}": ${(error as Error).message}`,
        {
          option: target,
        },
      );
    }
  }
  return missing;
}

/**
 * Transcript lines for what a run asked and its agent cannot take (issue 29: never dropped in silence):
 * a target with no session option, asked by the request itself, and not in the argv the agent was
 * started with (`argvTook`). They lead the transcript, so the completion event's preview shows them.
 */
export function unhonouredWarnings(
  agentName: string,
  missing: readonly ConfigTarget[],
  asked: { model: string | undefined; effort: string | undefined },
  argvTook: (target: ConfigTarget) => boolean,
): string[] {
  return missing.flatMap((target) => {
    const value = target === 'model' ? asked.model : asked.effort;
    if (value === undefined || argvTook(target)) return [];
    const field = target === 'model' ? 'model' : 'reasoning_effort';
    const placeholder = target === 'model' ? '{model}' : '{effort}';
    return [
      `[crew warning] agent ${agentName} cannot take ${field} "${value}": it offers no ${field} option and its command has no ${placeholder}; the run went on without it`,
    ];
  });
}

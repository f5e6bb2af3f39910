import type * as acp from '@agentclientprotocol/sdk';
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
 * the value is not already current). Throws with the reason when the agent rejects a value.
 */
export async function applyModelAndEffort(
  placement: Placement,
  model: string | undefined,
  effort: string | undefined,
): Promise<void> {
  for (const [target, wanted] of [
    ['model', model],
    ['effort', effort],
  ] as const) {
    if (wanted === undefined) continue;
    const option = findConfigOption(placement.configOptions, target);
    if (!option) continue;
    const value = configValueFor(option, wanted);
    if (option.currentValue === value) continue;
    try {
      placement.configOptions = await placement.runtime.setConfigOption(
        placement.sessionId,
        option.id,
        value,
      );
    } catch (error) {
      throw new Error(`could not set ${target} to "${wanted}": ${(error as Error).message}`);
    }
  }
}

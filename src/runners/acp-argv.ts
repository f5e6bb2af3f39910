/**
 * The agent's argv with `{model}` and `{effort}` filled in (DESIGN §6: model and reasoning effort go
 * through the agent's argv when it advertises no config option for them). Pure.
 */

export interface ArgvValues {
  model?: string | undefined;
  effort?: string | undefined;
}

const PLACEHOLDER = /\{(model|effort)\}/g;

/**
 * Replaces the placeholders in each argument. An argument whose placeholder has no value is dropped, and
 * so is a flag right before a bare placeholder (`--model {model}` both go), so the agent never sees a
 * literal `{model}` or a flag without its value.
 */
export function fillArgv(argv: readonly string[], values: ArgvValues): string[] {
  const out: string[] = [];
  for (const arg of argv) {
    const names = [...arg.matchAll(PLACEHOLDER)].map((m) => m[1] as 'model' | 'effort');
    if (names.every((name) => values[name] !== undefined)) {
      out.push(arg.replace(PLACEHOLDER, (_, name: 'model' | 'effort') => values[name] as string));
      continue;
    }
    const isBare = /^\{(model|effort)\}$/.test(arg);
    const previous = out.at(-1);
    if (isBare && previous?.startsWith('-') && !previous.includes('=')) out.pop();
  }
  return out;
}

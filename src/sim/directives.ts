/**
 * The simulator's directives (DESIGN §6, The simulator): a prompt line starting `#sim` says how the turn
 * behaves, e.g. `#sim sleep=800ms chunks=20 bytes=4096 mem=200mb cpu=0.5 fail=crash hang exit=3 echo
 * child=sleep tools=5 ask`. Pure: text in, directives and problems out.
 *
 * A bad or unknown directive never fails the turn; it is reported in `problems` (the simulator writes
 * them to stderr) and the rest still applies.
 */

/** How a turn fails on purpose: the process dies, the prompt request errors, or the agent refuses. */
export type SimFailure = 'crash' | 'error' | 'refusal';

export interface SimDirectives {
  /** How long the turn takes; output and tool calls are spread over it. @default 0 */
  sleepMs: number;
  /** Number of `agent_message_chunk` updates. @default 1 */
  chunks: number;
  /** Total output bytes (generated filler); absent = a short deterministic answer. */
  bytes?: number;
  /** Memory allocated and touched for the turn, so RSS really grows. @default 0 */
  memBytes: number;
  /** Busy fraction of one core during the turn, 0..1. @default 0 */
  cpuFraction: number;
  fail?: SimFailure;
  /** Never end the turn until cancelled. */
  hang: boolean;
  /** Exit the process with this code at the end of the turn. */
  exitCode?: number;
  /** Answer with the prompt text itself. */
  echo: boolean;
  /** Start a grandchild process that lives until the turn ends or the agent dies. */
  child?: 'sleep';
  /** Number of `tool_call` updates spread over the turn. @default 0 */
  tools: number;
  /** Ask `session/request_permission` first and say whether it was allowed. */
  ask: boolean;
  /** Say the agent's pid, session, cwd, model, effort and MCP servers (for tests of the runner). */
  info: boolean;
}

export interface ParsedDirectives {
  directives: SimDirectives;
  /** One message per directive that was not understood. */
  problems: string[];
}

/** Directives of a prompt without a `#sim` line. */
export function defaultDirectives(): SimDirectives {
  return {
    sleepMs: 0,
    chunks: 1,
    memBytes: 0,
    cpuFraction: 0,
    hang: false,
    echo: false,
    tools: 0,
    ask: false,
    info: false,
  };
}

const MAX_SLEEP_MS = 24 * 3600 * 1000;
const MAX_CHUNKS = 100_000;
const MAX_TOOLS = 10_000;
const MAX_BYTES = 1024 ** 3;
const MAX_MEM_BYTES = 64 * 1024 ** 3;

/** Reads every `#sim` line of `prompt` (later lines win) into directives. */
export function parseDirectives(prompt: string): ParsedDirectives {
  const directives = defaultDirectives();
  const problems: string[] = [];
  for (const line of prompt.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!/^#sim(\s|$)/.test(trimmed)) continue;
    for (const token of tokenize(trimmed.slice(4))) applyToken(directives, token, problems);
  }
  return { directives, problems };
}

interface Token {
  name: string;
  value?: string;
}

/** Splits a directive line on whitespace; a value may be double-quoted (`spawn="two words"`). */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /([^\s=]+)(?:=(?:"((?:[^"\\]|\\.)*)"|(\S*)))?/g;
  for (const match of text.matchAll(pattern)) {
    const name = match[1] as string;
    const quoted = match[2];
    const bare = match[3];
    if (quoted !== undefined) tokens.push({ name, value: quoted.replace(/\\(.)/g, '$1') });
    else if (bare !== undefined) tokens.push({ name, value: bare });
    else tokens.push({ name });
  }
  return tokens;
}

function applyToken(d: SimDirectives, token: Token, problems: string[]): void {
  const { name, value } = token;
  const bad = (expected: string) =>
    problems.push(
      `#sim ${name}: expected ${expected}, got ${value === undefined ? 'no value' : `"${value}"`}`,
    );
  switch (name) {
    case 'sleep': {
      const ms = value === undefined ? undefined : parseDurationMs(value);
      if (ms === undefined || ms > MAX_SLEEP_MS) bad('a duration like 800ms or 2s');
      else d.sleepMs = ms;
      return;
    }
    case 'chunks': {
      const n = parseCount(value, 1, MAX_CHUNKS);
      if (n === undefined) bad(`an integer 1..${MAX_CHUNKS}`);
      else d.chunks = n;
      return;
    }
    case 'bytes': {
      const n = value === undefined ? undefined : parseSizeBytes(value);
      if (n === undefined || n > MAX_BYTES) bad('a size like 4096 or 4kb');
      else d.bytes = n;
      return;
    }
    case 'mem': {
      const n = value === undefined ? undefined : parseSizeBytes(value);
      if (n === undefined || n > MAX_MEM_BYTES) bad('a size like 200mb');
      else d.memBytes = n;
      return;
    }
    case 'cpu': {
      const f = value === undefined ? Number.NaN : Number(value);
      if (!Number.isFinite(f) || f < 0 || f > 1) bad('a fraction 0..1');
      else d.cpuFraction = f;
      return;
    }
    case 'fail':
      if (value === 'crash' || value === 'error' || value === 'refusal') d.fail = value;
      else bad('crash, error or refusal');
      return;
    case 'exit': {
      const n = parseCount(value, 0, 255);
      if (n === undefined) bad('an exit code 0..255');
      else d.exitCode = n;
      return;
    }
    case 'child':
      if (value === 'sleep') d.child = 'sleep';
      else bad('sleep');
      return;
    case 'tools': {
      const n = parseCount(value, 0, MAX_TOOLS);
      if (n === undefined) bad(`an integer 0..${MAX_TOOLS}`);
      else d.tools = n;
      return;
    }
    case 'hang':
    case 'echo':
    case 'ask':
    case 'info':
      if (value !== undefined) problems.push(`#sim ${name} takes no value`);
      else d[name] = true;
      return;
    // Parent directives (`spawn="task"`, `wave`, `wait`, `yield`: the simulator as a parent calling
    // Crew's MCP tools) come with nesting; they will be parsed here into their own field.
    case 'spawn':
    case 'wave':
    case 'wait':
    case 'yield':
      problems.push(`#sim ${name}: parent directives are not supported yet`);
      return;
    default:
      problems.push(`#sim ${name}: unknown directive`);
  }
}

function parseCount(value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  const n = Number(value);
  return n >= min && n <= max ? n : undefined;
}

const DURATION_UNITS_MS: Record<string, number> = { '': 1, ms: 1, s: 1000, m: 60_000 };

/** `800ms`, `2s`, `1.5s`, `2m`; a bare number is milliseconds. */
export function parseDurationMs(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/i.exec(text.trim());
  if (!match) return undefined;
  const unit = DURATION_UNITS_MS[(match[2] ?? '').toLowerCase()] as number;
  return Math.round(Number(match[1]) * unit);
}

const SIZE_UNITS_BYTES: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
};

/** `4096`, `4kb`, `200mb`, `1.5gb` (binary units: 1 kb = 1024 bytes). */
export function parseSizeBytes(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(b|kb?|mb?|gb?)?$/i.exec(text.trim());
  if (!match) return undefined;
  const unit = SIZE_UNITS_BYTES[(match[2] ?? '').toLowerCase()] as number;
  return Math.round(Number(match[1]) * unit);
}

/**
 * The simulator's directives (DESIGN §6, The simulator): a prompt line starting `#sim` says how the turn
 * behaves; so does `#sim` as a word inside a line (a parent wrapped the task), where only the known
 * directives right after it count (see {@link midLineTokens}). Pure: text in, directives and problems out.
 *
 * | directive | effect |
 * |---|---|
 * | `sleep=800ms` | the turn takes this long; output and tool calls are spread over it (`ms`, `s`, `m`) |
 * | `chunks=20` | number of `agent_message_chunk` updates |
 * | `bytes=4096` | answer with exactly this many bytes of filler (`kb`, `mb`, `gb`: binary units) |
 * | `mem=200mb` | allocate and touch this much memory for the turn |
 * | `cpu=0.5` | keep this fraction of one core busy for the turn |
 * | `fail=crash\|error\|refusal` | die mid-turn, fail the prompt request, or stop with `refusal` |
 * | `hang` | never end the turn until cancelled |
 * | `exit=3` | exit the process with this code at the end of the turn |
 * | `echo` | answer with the prompt itself |
 * | `child=sleep` | start a grandchild process that lives for the turn |
 * | `tools=5` | report this many `tool_call` updates |
 * | `ask` | ask `session/request_permission` first |
 * | `info` | say pid, session, cwd, model, effort and MCP servers |
 * | `write=path=content` | write a file (relative to the session's cwd; `\n` unquoted is a newline) and say `wrote path` or why not; repeatable |
 * | `spawn="task"` | as a parent: spawn a run of `task` (verbatim, may hold `#sim` lines) on Crew's MCP server; repeatable |
 * | `wave` | send every `spawn=` task in one `spawn_run` call (`tasks=[...]`) |
 * | `wait` | after spawning, call `spawn_wait` until every admitted run has reported, then say `summary: …` |
 * | `yield` | after spawning, end the turn; later prompts carrying the completion events get `ack` lines and, with the last one, `summary: …` (the default for `spawn=`) |
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
  /** Files to write at the start of the turn (`write="path=content"`), in order. */
  writes: { path: string; content: string }[];
  /** The simulator as a parent: present when the prompt has at least one `spawn=`. */
  parent?: ParentDirectives;
}

/** What to do after the spawns: wait for the events in this turn, or end it and take them as prompts. */
export type AfterSpawn = 'wait' | 'yield';

/** The simulator as a parent calling Crew's MCP tools (`spawn="task"`, `wave`, `wait` | `yield`). */
export interface ParentDirectives {
  /** The task of each `spawn=`, verbatim, in order. */
  tasks: string[];
  /** One `spawn_run` call with `tasks=[...]` (a wave) instead of one call per task. */
  wave: boolean;
  /** @default 'yield' */
  after: AfterSpawn;
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
    writes: [],
  };
}

const MAX_SLEEP_MS = 24 * 3600 * 1000;
const MAX_CHUNKS = 100_000;
const MAX_TOOLS = 10_000;
const MAX_BYTES = 1024 ** 3;
const MAX_MEM_BYTES = 64 * 1024 ** 3;
const MAX_SPAWNS = 1000;
const MAX_WRITES = 100;

/** Parent directives while they are read: `after` stays unset until `wait` or `yield` names it. */
interface ParentDraft {
  tasks: string[];
  wave: boolean;
  after?: AfterSpawn;
}

/** Reads every `#sim` line of `prompt` (later lines win; `spawn=` tasks add up) into directives. */
export function parseDirectives(prompt: string): ParsedDirectives {
  const directives = defaultDirectives();
  const problems: string[] = [];
  const parent: ParentDraft = { tasks: [], wave: false };
  for (const line of prompt.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (/^#sim(\s|$)/.test(trimmed)) {
      for (const token of tokenize(trimmed.slice(4))) applyToken(directives, parent, token, problems);
    } else if (line.includes('#sim')) {
      for (const token of midLineTokens(line)) applyToken(directives, parent, token, problems);
    }
  }
  if (parent.tasks.length > 0) {
    directives.parent = { tasks: parent.tasks, wave: parent.wave, after: parent.after ?? 'yield' };
  } else {
    // Said, not ignored: a prompt that meant to spawn and spawns nothing should be easy to spot.
    if (parent.wave) problems.push('#sim wave: needs at least one spawn="task"');
    if (parent.after) problems.push(`#sim ${parent.after}: needs at least one spawn="task"`);
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

/** Every directive name; mid-line, a word that is not one ends the directives (it is prose). */
const DIRECTIVE_NAMES: ReadonlySet<string> = new Set([
  'sleep',
  'chunks',
  'bytes',
  'mem',
  'cpu',
  'fail',
  'hang',
  'exit',
  'echo',
  'child',
  'tools',
  'ask',
  'info',
  'spawn',
  'wave',
  'wait',
  'yield',
]);

/** `#sim` as a word of its own (after a space, a quote or a backtick): not `#simulate`, `x#sim` or `(#sim`. */
const MID_LINE_MARK = /(?<=^|[\s"'`])#sim(?=\s|$)/g;
/** Closing punctuation a wrapper leaves on the last directive (`"#sim echo"`, `` `#sim chunks=4`, ``). */
const TRAILING_PUNCTUATION = /[`"'),.;:]+$/;

/**
 * The directives after each `#sim` inside a line (a parent wrapped the task: `Do this: #sim sleep=2s`).
 * Leniently, so prose that mentions `#sim` neither applies nor reports anything: the known directive
 * names right after the mark are taken, up to the first other word or closing punctuation. A known
 * directive with a bad value is still reported, as at the start of a line.
 */
function midLineTokens(line: string): Token[] {
  const tokens: Token[] = [];
  let consumedTo = 0;
  for (const mark of line.matchAll(MID_LINE_MARK)) {
    if (mark.index < consumedTo) continue;
    const start = mark.index + 4;
    consumedTo = start;
    const pattern = /([^\s=]+)(?:=(?:"((?:[^"\\]|\\.)*)"|(\S*)))?/y;
    for (let at = start; ; ) {
      while (at < line.length && /\s/.test(line[at] as string)) at++;
      pattern.lastIndex = at;
      const match = pattern.exec(line);
      if (!match) break;
      let name = match[1] as string;
      const quoted = match[2];
      let bare = match[3];
      let closes = false;
      if (quoted === undefined && bare === undefined && TRAILING_PUNCTUATION.test(name)) {
        name = name.replace(TRAILING_PUNCTUATION, '');
        closes = true;
      } else if (bare !== undefined && TRAILING_PUNCTUATION.test(bare)) {
        bare = bare.replace(TRAILING_PUNCTUATION, '');
        closes = true;
      }
      if (!DIRECTIVE_NAMES.has(name)) break;
      if (quoted !== undefined) tokens.push({ name, value: quoted.replace(/\\(.)/g, '$1') });
      else if (bare !== undefined) tokens.push({ name, value: bare });
      else tokens.push({ name });
      at = pattern.lastIndex;
      consumedTo = at;
      if (closes) break;
    }
  }
  return tokens;
}

function applyToken(d: SimDirectives, parent: ParentDraft, token: Token, problems: string[]): void {
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
    case 'write': {
      const eq = value?.indexOf('=') ?? -1;
      if (value === undefined || eq < 1) bad('write="path=content"');
      else if (d.writes.length >= MAX_WRITES) problems.push(`#sim write: at most ${MAX_WRITES} files`);
      else d.writes.push({ path: value.slice(0, eq), content: value.slice(eq + 1).replace(/\\n/g, '\n') });
      return;
    }
    case 'spawn':
      // An empty task is passed on as it is: refusing it (`empty_task`) is Crew's job.
      if (value === undefined) bad('a task like spawn="#sim sleep=50ms"');
      else if (parent.tasks.length >= MAX_SPAWNS) problems.push(`#sim spawn: at most ${MAX_SPAWNS} tasks`);
      else parent.tasks.push(value);
      return;
    case 'wave':
      if (value !== undefined) problems.push(`#sim ${name} takes no value`);
      else parent.wave = true;
      return;
    case 'wait':
    case 'yield':
      if (value !== undefined) problems.push(`#sim ${name} takes no value`);
      else {
        if (parent.after !== undefined && parent.after !== name)
          problems.push(`#sim ${name}: wait and yield exclude each other; the last one applies`);
        parent.after = name;
      }
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

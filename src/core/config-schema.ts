import { z } from 'zod';
import { agentDefSchema } from './agent-def.js';
import { MAX_TOKENS_LIMIT } from './refusals.js';

/**
 * Every configuration key with its default and meaning (DESIGN §4). `$CREW_HOME/config.json` is a flat
 * object of the keys a user set; {@link parseConfig} validates it once, at the boundary, and reports
 * every problem with its key.
 */
interface KeySpec<S extends z.ZodType> {
  schema: S;
  default: z.output<S>;
  doc: string;
  /** A credential: stored, never printed (`crew config get/list` show {@link HIDDEN}). */
  secret?: boolean;
}

function key<S extends z.ZodType>(schema: S, defaultValue: z.output<S>, doc: string): KeySpec<S> {
  return { schema, default: defaultValue, doc };
}

function secretKey<S extends z.ZodType>(schema: S, defaultValue: z.output<S>, doc: string): KeySpec<S> {
  return { schema, default: defaultValue, doc, secret: true };
}

/** What a set secret prints as. */
export const HIDDEN = '(set, hidden)';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const num = (min: number, max = Number.MAX_VALUE) => z.number().min(min).max(max);
const paths = z.array(z.string().min(1)).max(1000);
/**
 * POSIX `/…`, or Windows `C:\…` / `\\server\…`. A relative root would be judged against whichever directory
 * the daemon happened to start in, so it is refused rather than resolved.
 */
const isAbsolutePath = (path: string) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(path);
const absolutePaths = z
  .array(z.string().min(1).refine(isAbsolutePath, 'an absolute path (relative roots are refused)'))
  .max(1000);
const url = z.string().regex(/^https?:\/\/[^\s]+$/, 'an http(s) URL');

export const CONFIG_KEYS = {
  'agent.max_subagents': key(
    int(0, 10_000),
    0,
    '0 = auto-size at start; >= 3 = pinned; 1-2 are raised to 3 (refused by the HTTP API)',
  ),
  'agent.subagent_auto_max': key(
    int(0, 10_000),
    32,
    'ceiling of the auto cap (stand-in for provider concurrency); below 3 is raised to 3',
  ),
  'agent.subagent_mem_buffer_pct': key(num(0, 99), 20, '% of memory and CPU kept for the OS and others'),
  'agent.subagent_cost_gb': key(num(0.001, 1024), 0.5, 'memory cost per run (GiB) until learned'),
  'agent.subagent_cpu_cost_cores': key(num(0.001, 1024), 1.0, 'CPU cost per run (cores) until learned'),
  'agent.cost_samples_per_agent': key(int(1, 100_000), 50, 'samples kept per agent (FIFO)'),
  'agent.cost_min_samples': key(
    int(1, 100_000),
    5,
    'samples needed before the learned p90 replaces the fallback',
  ),
  'agent.spawn_min_memory_gb': key(num(0, 1_000_000), 4.0, 'per-spawn memory gate (GiB); 0 disables'),
  'agent.reservation_buffer_gb': key(
    num(0, 1_000_000),
    2,
    "GiB kept free beyond the live runs' expected peaks and their spread before another run starts",
  ),
  'agent.pause_margin_gb': key(
    num(0, 1_000_000),
    2.5,
    'GiB of free memory under which runs still growing are paused until memory returns; 0 disables',
  ),
  'agent.subagent_spawn_stagger_secs': key(num(0, 3600), 2.0, 'minimum gap between successive starts'),
  'session.pool_size': key(int(0, 1000), 0, 'warm pool size; reserved in the memory term when > 0'),
  'agent.session_sharing': key(z.boolean(), true, 'allow shared runtimes for eligible runs'),
  'agent.subagent_timeout_secs': key(num(1, 31 * 86_400), 1800, 'per-run timeout'),
  'agent.subagent_delivery_timeout_secs': key(
    num(1, 31 * 86_400),
    1200,
    'from run end to delivery; then the event is undeliverable',
  ),
  'agent.subagent_max_turns': key(int(0, 200), 100, 'tool-call budget per run; a spawn may set up to 200'),
  'agent.subagent_max_queued': key(int(0, 1_000_000), 32, 'bound on queued single spawns'),
  'agent.subagent_max_queued_wave_members': key(
    int(0, 10_000_000),
    5000,
    'bound on queued wave members (a wave fits whole or is refused whole)',
  ),
  'agent.subagent_batch_max': key(int(1, 100_000), 1000, 'tasks in one wave'),
  'agent.subagent_max_depth': key(int(1, 64), 1, '1 = sub-agents cannot spawn'),
  'agent.subagent_max_children': key(int(0, 10_000), 5, 'live nested children per run'),
  'agent.subagent_cwd_allowed_roots': key(
    absolutePaths,
    [],
    'a cwd argument must resolve under one of these (absolute paths)',
  ),
  'agent.task_max_chars': key(int(1, 50_000_000), 100_000, 'longest accepted task'),
  'agent.default_agent': key(z.string().min(1), 'sim', 'the agent used when a spawn names none'),
  'agent.acp_request_timeout_secs': key(
    num(1, 3600),
    30,
    'how long an ACP agent may take to answer one request (initialize, session/new) before its run fails',
  ),
  'agent.permission_policy': key(
    z.enum(['allow', 'reject']),
    'allow',
    "answer to an agent's session/request_permission",
  ),
  'agent.subagent_result_ttl_secs': key(
    num(0, 365 * 86_400),
    3600,
    'transcript kept after delivery (or undeliverable)',
  ),
  'agent.keep_ttl_secs': key(num(0, 365 * 86_400), 86_400, 'idle kept conversation released after this'),
  'agent.run_retention_secs': key(
    num(60, 10 * 365 * 86_400),
    7 * 86_400,
    'ended, settled runs admitted longer ago than this are deleted with their events and transcripts',
  ),
  'agent.run_history_max': key(
    int(100, 100_000_000),
    100_000,
    'runs kept at most: beyond this the oldest ended, settled ones are deleted',
  ),
  'agent.max_kept_conversations': key(
    int(0, 100_000),
    8,
    'idle kept conversations beyond this: the least recently used is released',
  ),
  'agent.transcript_max_bytes': key(
    int(1024, Number.MAX_SAFE_INTEGER),
    67_108_864,
    'beyond this a transcript is cut with a marker; the run goes on',
  ),
  'agent.status_max_chars': key(
    int(1, 100_000_000),
    200_000,
    'spawn_status with no paging returns at most this, then pages',
  ),
  'agent.grep_budget_ms': key(
    int(10, 600_000),
    1000,
    'one spawn_status grep runs at most this long (off the event loop), then returns its matches and the offset to go on from',
  ),
  'agent.completion_keep': key(
    z.enum(['head', 'tail', 'both']),
    'head',
    'which part of the output a completion event keeps',
  ),
  'agent.completion_keep_chars': key(
    int(0, 10_000_000),
    3000,
    'preview length of a completion event; 0 disables truncation',
  ),
  'agent.shutdown_grace_secs': key(
    num(0, 3600),
    10,
    'on SIGTERM: stop admitting, wait this long, then cancel what runs',
  ),
  'host.sample_interval_secs': key(num(0.1, 3600), 2, 'process-tree sampling tick'),
  'host.kill_grace_secs': key(num(0, 3600), 5, "SIGTERM -> SIGKILL for a run's tree"),
  'host.oom_score_adj': key(
    int(0, 1000),
    500,
    "raised oom_score_adj of a run's process (Linux): out of memory, the kernel ends a sub-agent before the parent or Crew; 0 leaves it",
  ),
  'host.spawner': key(
    z.enum(['auto', 'node']),
    'auto',
    "what starts command runs: auto = a small C helper built once with the host's cc (cached in ~/.cache/crew), the Node helper until then or without a compiler; node = always the Node helper",
  ),
  'workspace.git_timeout_secs': key(num(1, 3600), 60, 'bound on each git command Crew runs for a workspace'),
  'workspace.unmerged_keep_secs': key(
    num(0, 365 * 86_400),
    604_800,
    "an unmerged branch with changes outlives its run's transcript (or its conversation's release) this long; 0 = goes with it",
  ),
  'workspace.max_branches': key(
    int(1, 1_000_000),
    500,
    "branches (and worktrees) Crew keeps at most: beyond this the oldest ended runs' go first",
  ),
  'workspace.conflict_check_max': key(
    int(0, 10_000),
    50,
    "wave members a member's changes are checked against for conflicts as it ends, at most",
  ),
  'workspace.sandbox_default': key(
    z.boolean(),
    false,
    'every run is sandboxed unless its spawn or agent says sandbox: false',
  ),
  'workspace.bwrap_path': key(
    z.string().min(1),
    'bwrap',
    "bubblewrap's executable (Debian package bubblewrap)",
  ),
  'workspace.sandbox_writable_paths': key(
    paths,
    [],
    "paths a sandboxed agent may write besides its worktree and private temp dir (an agent CLI's own cache, e.g. ~/.cache/opencode)",
  ),
  'workspace.sandbox_hidden_paths': key(
    paths,
    [],
    'more paths a sandboxed agent cannot see, beside the defaults (~/.ssh, ~/.aws, ~/.gnupg, … and CREW_HOME)',
  ),
  'context.memory_files': key(paths, [], 'files prepended to a task unless include_memory is false'),
  'context.lessons_files': key(paths, [], 'files prepended to a task unless include_lessons is false'),
  'chat.parent_agent': key(z.string().min(1), 'sim', 'the ACP agent Crew hosts as the parent of a chat'),
  'chat.max_chats': key(
    int(1, 10_000),
    16,
    'open hosted chats at most: a new one beyond this closes the least recently active',
  ),
  'chat.turns_kept': key(
    int(1, 100_000),
    50,
    "a chat's last turns kept in the store (replayed after a restart)",
  ),
  'mcp.session_idle_secs': key(num(1, 365 * 86_400), 3600, 'an MCP session unused this long is closed'),
  'mcp.max_sessions': key(
    int(1, 1_000_000),
    512,
    'open MCP sessions at most: beyond this the least recently used is closed',
  ),
  'dashboard.read_only': key(
    z.boolean(),
    false,
    'the dashboard shows no actions (cancel, steer, ack, chat) and refuses them',
  ),
  'agent.subagent_max_tokens': key(
    int(0, MAX_TOKENS_LIMIT),
    0,
    'token budget per run, counted at the provider gateway (input + output); 0 = none',
  ),
  'providers.enabled': key(
    z.boolean(),
    true,
    "agents that name a provider call it through Crew's provider gateway (a loopback pass-through)",
  ),
  'providers.adaptive_cap': key(
    z.boolean(),
    true,
    'a 429 / 529 lowers the number of runs started against that provider; clean completions raise it',
  ),
  'providers.anthropic.upstream': key(
    url,
    'https://api.anthropic.com',
    'where the gateway forwards Anthropic calls',
  ),
  'providers.openai.upstream': key(
    url,
    'https://api.openai.com/v1',
    'where the gateway forwards OpenAI calls',
  ),
  'providers.gemini.upstream': key(
    url,
    'https://generativelanguage.googleapis.com',
    'where the gateway forwards Gemini calls',
  ),
  'providers.anthropic.max_in_flight_requests': key(
    int(0, 10_000),
    0,
    'Anthropic requests in flight at once through the gateway; more wait briefly, then get a 429 (0 = no bound)',
  ),
  'providers.anthropic.cap': key(
    int(0, 10_000),
    0,
    'a fixed number of runs started against Anthropic at once (`cap_source: configured`); 0 = adaptive',
  ),
  'providers.openai.max_in_flight_requests': key(
    int(0, 10_000),
    0,
    'OpenAI requests in flight at once through the gateway; more wait briefly, then get a 429 (0 = no bound)',
  ),
  'providers.openai.cap': key(
    int(0, 10_000),
    0,
    'a fixed number of runs started against OpenAI at once (`cap_source: configured`); 0 = adaptive',
  ),
  'providers.gemini.max_in_flight_requests': key(
    int(0, 10_000),
    0,
    'Gemini requests in flight at once through the gateway; more wait briefly, then get a 429 (0 = no bound)',
  ),
  'providers.gemini.cap': key(
    int(0, 10_000),
    0,
    'a fixed number of runs started against Gemini at once (`cap_source: configured`); 0 = adaptive',
  ),
  'hooks.claude.max_in_flight': key(int(1, 10_000), 5, 'Claude Code width cap'),
  'hooks.claude.scope': key(
    z.enum(['session', 'host']),
    'session',
    '`session` (per parent session) or `host`',
  ),
  'slack.bot_token': secretKey(
    z.string().regex(/^(xoxb-[\w-]+)?$/, 'a bot token starting xoxb-'),
    '',
    "the Slack app's bot token (`xoxb-…`); empty = Slack off. Never printed",
  ),
  'slack.signing_secret': secretKey(
    z.string().regex(/^[\w-]*$/, "the app's signing secret (letters and digits)"),
    '',
    'verifies every request to `POST /slack/events` (HTTP mode). Never printed',
  ),
  'slack.app_token': secretKey(
    z.string().regex(/^(xapp-[\w-]+)?$/, 'an app-level token starting xapp-'),
    '',
    'Socket Mode when set (`xapp-…`, scope `connections:write`). Never printed',
  ),
  'slack.allowed_users': key(
    z.array(z.string().regex(/^[UW][A-Z0-9]{2,30}$/, 'a Slack user id like U012AB3CD')).max(10_000),
    [],
    'Slack user ids allowed to spawn; empty = nobody',
  ),
  'metrics.token': secretKey(
    z.string().regex(/^([\w.~+/-]{24,512})?$/, 'a token of 24-512 letters, digits or . _ ~ + / -'),
    '',
    'a bearer token that may read `GET /metrics` and nothing else (the operator token may too); empty = none. Never printed',
  ),
  'slack.api_url': key(
    z.url({ protocol: /^https?$/ }),
    'https://slack.com/api/',
    "Slack's Web API base URL (tests point it at a loopback fake)",
  ),
  'slack.reannounce_secs': key(
    num(0, 365 * 86_400),
    3600,
    'an unacked result is re-announced once after this; 0 = never',
  ),
  'cluster.redis_url': secretKey(
    z.string().regex(/^(rediss?:\/\/[^\s]+)?$/, 'a redis:// or rediss:// URL'),
    '',
    'cluster mode on BullMQ when set (`redis://host:6379`); empty = single host on SQLite, no Redis connection. Never printed',
  ),
  'cluster.name': key(
    z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'lower-case letters, digits, - and _'),
    'crew',
    "the cluster's namespace in Redis, so two clusters can share one Redis",
  ),
  'cluster.gateway_name': key(
    z.string().regex(/^([a-z0-9][a-z0-9_.-]{0,63})?$/, 'lower-case letters, digits, ., - and _'),
    '',
    "this gateway's name in the cluster; empty = the host name and a hash of CREW_HOME",
  ),
  'cluster.provider_cap': key(
    int(1, 100_000),
    8,
    'runs executing at once across the whole cluster (BullMQ global concurrency); with `providers.adaptive_cap` the start and ceiling of the shared adaptive cap',
  ),
  'cluster.host_cap': key(
    int(0, 10_000),
    0,
    "runs this gateway executes for the cluster at once (its worker's concurrency); 0 = the host cap (DESIGN §5)",
  ),
  'cluster.stalled_interval_ms': key(
    int(200, 3_600_000),
    30_000,
    'a gateway silent this long whose job locks (of this span) lapsed is dead: its runs end lost about this long after it died, within twice this',
  ),
} as const;

export type ConfigKey = keyof typeof CONFIG_KEYS;
export type CrewConfig = { -readonly [K in ConfigKey]: z.output<(typeof CONFIG_KEYS)[K]['schema']> } & {
  /** Named agents from config (`agents.NAME`). */
  agents: Record<string, z.output<typeof agentDefSchema>>;
};

export const AGENT_KEY_PREFIX = 'agents.';

export interface ConfigProblem {
  key: string;
  expected: string;
  got: string;
}

/** A value the loader changed rather than refused; written to the SEL as `config_bounds_clamped`. */
export interface ClampEvent {
  key: ConfigKey;
  from: number;
  to: number;
  reason: string;
}

export type ParseConfigResult =
  | { ok: true; config: CrewConfig; clamped: ClampEvent[] }
  | { ok: false; problems: ConfigProblem[] };

export function isConfigKey(name: string): name is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, name);
}

/** A credential key: its value is never printed or echoed in a problem. */
export function isSecretKey(name: string): boolean {
  return isConfigKey(name) && (CONFIG_KEYS[name] as KeySpec<z.ZodType>).secret === true;
}

/**
 * How a value is shown: a set secret as {@link HIDDEN}, an unset one as `""`, an agent (`agents.NAME`, or
 * the whole `agents` map) with each of its `env` values hidden (they are often credentials), anything else
 * as it is.
 */
export function shownValue(name: string, value: unknown): unknown {
  if (name === 'agents' && isPlainRecord(value)) {
    const shown: Record<string, unknown> = {};
    for (const [agent, def] of Object.entries(value)) shown[agent] = withEnvHidden(def);
    return shown;
  }
  if (name.startsWith(AGENT_KEY_PREFIX)) return withEnvHidden(value);
  return isSecretKey(name) && value !== '' ? HIDDEN : value;
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An agent definition with its env values replaced by {@link HIDDEN} (the names stay: they say what is set). */
function withEnvHidden(def: unknown): unknown {
  if (!isPlainRecord(def) || !isPlainRecord(def.env)) return def;
  const env: Record<string, string> = {};
  for (const name of Object.keys(def.env)) env[name] = HIDDEN;
  return { ...def, env };
}

export function defaultConfig(): CrewConfig {
  const config: Record<string, unknown> = { agents: {} };
  for (const [name, spec] of Object.entries(CONFIG_KEYS)) {
    config[name] = structuredClone(spec.default);
  }
  return config as CrewConfig;
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** zod says "Invalid input: expected number, received string"; the problem line wants "number". */
function expectedOf(issue: z.core.$ZodIssue): string {
  return issue.message
    .replace(/^Invalid (input|option): /, '')
    .replace(/^expected /, '')
    .replace(/, received \w+$/, '');
}

/** Validates one key's value, reporting a problem rather than throwing. */
export function parseKeyValue(
  name: string,
  value: unknown,
): { ok: true; value: unknown } | { ok: false; problems: ConfigProblem[] } {
  if (name.startsWith(AGENT_KEY_PREFIX)) {
    const agentName = name.slice(AGENT_KEY_PREFIX.length);
    const problems: ConfigProblem[] = [];
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(agentName)) {
      problems.push({
        key: name,
        expected: 'an agent name of letters, digits, . _ -',
        got: describe(agentName),
      });
    }
    const parsed = agentDefSchema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const sub = issue.path.length > 0 ? `${name}.${issue.path.join('.')}` : name;
        problems.push({ key: sub, expected: expectedOf(issue), got: describe(pick(value, issue.path)) });
      }
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true, value: parsed.data };
  }
  if (!isConfigKey(name)) {
    return {
      ok: false,
      problems: [{ key: name, expected: 'a known configuration key', got: describe(value) }],
    };
  }
  const parsed = CONFIG_KEYS[name].schema.safeParse(value);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => ({
        key: issue.path.length > 0 ? `${name}[${issue.path.join('.')}]` : name,
        expected: expectedOf(issue),
        got: isSecretKey(name) ? '(hidden)' : describe(pick(value, issue.path)),
      })),
    };
  }
  return { ok: true, value: parsed.data };
}

function pick(value: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = value;
  for (const part of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

/**
 * Validates a flat config object: unknown keys and bad values are problems (all of them, not the first);
 * `agent.max_subagents` 1-2 and `agent.subagent_auto_max` below 3 are raised to 3 with a clamp event.
 */
export function parseConfig(raw: unknown): ParseConfigResult {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return {
      ok: false,
      problems: [{ key: '(root)', expected: 'a JSON object of key: value', got: describe(raw) }],
    };
  }
  const config = defaultConfig();
  const problems: ConfigProblem[] = [];
  const target = config as unknown as Record<string, unknown>;
  for (const [name, value] of Object.entries(raw)) {
    const parsed = parseKeyValue(name, value);
    if (!parsed.ok) {
      problems.push(...parsed.problems);
      continue;
    }
    if (name.startsWith(AGENT_KEY_PREFIX)) {
      config.agents[name.slice(AGENT_KEY_PREFIX.length)] = parsed.value as CrewConfig['agents'][string];
    } else {
      target[name] = parsed.value;
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config, clamped: clampBounds(config) };
}

/** The documented raises: a cap below 3 is never honoured (DESIGN §4). Mutates and reports. */
export function clampBounds(config: CrewConfig): ClampEvent[] {
  const clamped: ClampEvent[] = [];
  const pinned = config['agent.max_subagents'];
  if (pinned === 1 || pinned === 2) {
    config['agent.max_subagents'] = 3;
    clamped.push({
      key: 'agent.max_subagents',
      from: pinned,
      to: 3,
      reason: 'a pinned cap must be at least 3',
    });
  }
  const autoMax = config['agent.subagent_auto_max'];
  if (autoMax < 3) {
    config['agent.subagent_auto_max'] = 3;
    clamped.push({
      key: 'agent.subagent_auto_max',
      from: autoMax,
      to: 3,
      reason: 'the auto cap ceiling must be at least 3',
    });
  }
  return clamped;
}

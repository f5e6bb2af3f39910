/**
 * What the scripted provider answers (pure): a request, reduced to what every wire format shares
 * ({@link ModelRequest}), goes through a {@link Script} to one {@link ScriptReply}. The protocol modules
 * turn the reply into Anthropic, OpenAI or Gemini bytes.
 *
 * The default script reads `#fake` directives from the conversation's user text, so one provider serves
 * many tests and a prompt says how its turn goes (like the simulator's `#sim` lines):
 *
 * | directive | reply |
 * |---|---|
 * | (none) | the text `reply` given to the provider, default "Hello from the fake provider." |
 * | `#fake reply="text"` | that text |
 * | `#fake shell="echo hi"` | a call of the request's shell tool (`Bash`, `shell`, `run_shell_command`, …) with that command; once the conversation holds that call, the text of `then="…"` (default "done") |
 * | `#fake tool=spawn_run args='{"task":"…"}'` | a call of the offered tool whose name ends with `spawn_run` (Claude's `mcp__crew__spawn_run`, opencode's `crew_spawn_run`, …), then the `then` text; while it is not offered yet and Claude Code offers `WaitForMcpServers`, a call of that first |
 * | `#fake status=429 retry_after=1` | an HTTP error of that status (429 rate limit, 529 overloaded, 503 unavailable, 500), with `retry-after` when given |
 * | `#fake hang` | no answer at all until the client or the provider closes the connection |
 *
 * A tool step is only taken when the request offers such a tool: side calls (titles, summaries, JSON
 * checks) carry no tools and get text, or, when they ask for JSON by a schema, a minimal object of it.
 */

import { ownValue } from '../core/own.js';

/** A tool the request offers: its name and its JSON schema for the arguments (when given). */
export interface OfferedTool {
  name: string;
  schema?: unknown;
  /**
   * A tool offered inside a namespace (OpenAI Responses' `{type: 'namespace', name, tools}`, as Codex offers
   * an MCP server's tools): its namespace, and its own name there; `name` is then `<namespace>__<own name>`.
   */
  namespace?: { name: string; tool: string };
}

/** A request in every wire format's common terms. */
export interface ModelRequest {
  api: ProviderApi;
  /** The model the client named. */
  model: string;
  tools: OfferedTool[];
  /** The user-role text of the conversation, in order (tool results excluded). */
  userTexts: string[];
  /** How many tool results the conversation already holds. */
  toolResults: number;
  /** Names of the tools the assistant already called in the conversation, in order. */
  calledTools: string[];
  /** A JSON schema the client wants the answer to follow (Gemini's `responseJsonSchema`, OpenAI's `json_schema`). */
  jsonSchema?: unknown;
  stream: boolean;
}

export type ProviderApi = 'anthropic' | 'openai-responses' | 'openai-chat' | 'gemini';

export type ScriptReply =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; name: string; input: Record<string, unknown> }
  | { kind: 'error'; status: number; retryAfterSecs?: number; message: string }
  | { kind: 'hang' };

/** Chooses the reply to one request. */
export type Script = (request: ModelRequest) => ScriptReply;

/** The reply when no directive says otherwise. */
export const DEFAULT_REPLY = 'Hello from the fake provider.';

/** Claude Code's tool for waiting until its MCP servers are connected. */
const WAIT_FOR_MCP = 'WaitForMcpServers';

/** Names a shell tool goes by in the CLIs Crew drives. */
const SHELL_TOOL_NAMES = ['Bash', 'bash', 'shell', 'shell_command', 'exec_command', 'run_shell_command'];

export interface Directives {
  reply?: string;
  shell?: string;
  tool?: string;
  args?: Record<string, unknown>;
  then?: string;
  status?: number;
  retryAfterSecs?: number;
  hang: boolean;
}

const PAIR = /(\w+)(?:=("(?:[^"\\]|\\.)*"|'[^']*'|\S+))?/g;

/** The `#fake` directives of the first user text that has a `#fake` line; undefined when none has. */
export function parseDirectives(userTexts: readonly string[]): Directives | undefined {
  for (const text of userTexts) {
    const line = text.split('\n').find((l) => l.trimStart().startsWith('#fake'));
    if (line === undefined) continue;
    const directives: Directives = { hang: false };
    for (const match of line.trimStart().slice('#fake'.length).matchAll(PAIR)) {
      const key = match[1] ?? '';
      const value = unquote(match[2]);
      switch (key) {
        case 'reply':
        case 'shell':
        case 'tool':
        case 'then':
          directives[key] = value;
          break;
        case 'args': {
          const parsed: unknown = JSON.parse(value || '{}');
          if (parsed && typeof parsed === 'object') directives.args = parsed as Record<string, unknown>;
          break;
        }
        case 'status':
          directives.status = Number(value);
          break;
        case 'retry_after':
          directives.retryAfterSecs = Number(value);
          break;
        case 'hang':
          directives.hang = true;
          break;
        default:
          break; // Unknown words are ignored, as the simulator does.
      }
    }
    return directives;
  }
  return undefined;
}

function unquote(value: string | undefined): string {
  if (value === undefined) return '';
  if (value.startsWith('"')) return JSON.parse(value) as string;
  if (value.startsWith("'")) return value.slice(1, -1);
  return value;
}

/** The script that follows `#fake` directives, answering `reply` when there are none. */
export function directiveScript(reply: string = DEFAULT_REPLY): Script {
  return (request) => {
    const directives = parseDirectives(request.userTexts);
    if (directives === undefined) return { kind: 'text', text: textOrJson(request, reply) };
    if (directives.hang) return { kind: 'hang' };
    if (directives.status !== undefined && directives.status >= 400) {
      return {
        kind: 'error',
        status: directives.status,
        ...(directives.retryAfterSecs !== undefined && { retryAfterSecs: directives.retryAfterSecs }),
        message: errorMessage(directives.status),
      };
    }
    const then = textOrJson(request, directives.then ?? 'done');
    if (directives.shell !== undefined) {
      const tool = request.tools.find((t) => SHELL_TOOL_NAMES.includes(t.name));
      const called = request.calledTools.some((name) => SHELL_TOOL_NAMES.includes(name));
      if (tool === undefined || called) return { kind: 'text', text: then };
      return { kind: 'tool', name: tool.name, input: shellInput(tool.schema, directives.shell) };
    }
    if (directives.tool !== undefined) {
      const wanted = directives.tool;
      const matches = (name: string) => name === wanted || name.endsWith(`_${wanted}`);
      if (request.calledTools.some(matches)) return { kind: 'text', text: then };
      const tool = request.tools.find((t) => matches(t.name));
      if (tool !== undefined) return { kind: 'tool', name: tool.name, input: directives.args ?? {} };
      // Claude Code offers this while MCP servers still connect: wait for them once, as a model would.
      const wait = request.tools.find((t) => t.name === WAIT_FOR_MCP);
      if (wait !== undefined && !request.calledTools.includes(WAIT_FOR_MCP)) {
        return { kind: 'tool', name: wait.name, input: {} };
      }
      return { kind: 'text', text: then };
    }
    return { kind: 'text', text: textOrJson(request, directives.reply ?? reply) };
  };
}

function errorMessage(status: number): string {
  if (status === 429) return 'rate limited by the fake provider; retry later';
  if (status === 529) return 'the fake provider is overloaded';
  if (status === 503) return 'the fake provider is unavailable';
  return `the fake provider failed with ${status}`;
}

/** `text`, or a minimal object of the request's JSON schema when it asks for one. */
function textOrJson(request: ModelRequest, text: string): string {
  return request.jsonSchema === undefined ? text : JSON.stringify(minimalValue(request.jsonSchema));
}

/**
 * Arguments for a shell tool, shaped by its schema: `command` (or `cmd`) as a string or, when the schema
 * says array, as `["bash", "-lc", command]`; any other required string gets a short filler.
 */
export function shellInput(schema: unknown, command: string): Record<string, unknown> {
  const props = objectProperties(schema);
  const key = props.command !== undefined ? 'command' : props.cmd !== undefined ? 'cmd' : 'command';
  const isArray = (props[key] as { type?: unknown } | undefined)?.type === 'array';
  const input: Record<string, unknown> = { [key]: isArray ? ['bash', '-lc', command] : command };
  for (const name of requiredOf(schema)) {
    if (Object.hasOwn(input, name)) continue;
    input[name] = minimalValue(ownValue(props, name));
    if (name === 'description') input[name] = 'run a command';
  }
  return input;
}

function objectProperties(schema: unknown): Record<string, unknown> {
  const props = (schema as { properties?: unknown } | undefined)?.properties;
  return props && typeof props === 'object' ? (props as Record<string, unknown>) : {};
}

function requiredOf(schema: unknown): string[] {
  const required = (schema as { required?: unknown } | undefined)?.required;
  return Array.isArray(required) ? required.filter((r): r is string => typeof r === 'string') : [];
}

/**
 * The smallest value that satisfies common JSON schemas: the first enum value, `""`, `0`, `false`, `[]`,
 * or an object of its required properties (all properties when none are marked required). Bounded depth.
 */
export function minimalValue(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > 8) return null;
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  if ('const' in s) return s.const;
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return minimalValue(options[0], depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (typeof type === 'string' ? type.toLowerCase() : 'object') {
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'null':
      return null;
    default: {
      const props = objectProperties(s);
      const required = requiredOf(s);
      const names = required.length > 0 ? required : Object.keys(props);
      return Object.fromEntries(names.map((name) => [name, minimalValue(ownValue(props, name), depth + 1)]));
    }
  }
}

/** A rough token count (4 characters a token), for usage fields. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

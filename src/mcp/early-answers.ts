import { SERVER_CAPABILITIES, SERVER_INFO, SERVER_INSTRUCTIONS } from './server-info.js';
import { TOOL_LIST_JSON } from './tool-list-json.js';

/**
 * What the stdio bridge answers before the MCP SDK has loaded (`stdio-front.ts`): `initialize` and
 * `tools/list`, the two requests a parent agent waits on before it uses Crew, each answered exactly as
 * the SDK `Server` the bridge loads next would answer it. A request whose shape the hand checks here
 * cannot vouch for is left to that `Server` (answered a little later), so the checks are narrower than
 * the SDK's schemas, never wider; a differential test over generated requests holds them to that.
 */

/**
 * The MCP protocol versions the bridge speaks, newest first: the MCP SDK's `SUPPORTED_PROTOCOL_VERSIONS`
 * (whose `Server` serves everything after `initialize`), written out so the bridge answers `initialize`
 * before it loads the SDK. A test keeps the two lists equal.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
] as const;

/** What a server answers a client that asks for a version it does not speak (the SDK's `LATEST_PROTOCOL_VERSION`). */
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];

/** A JSON-RPC id as the SDK accepts one: a string or a safe integer. */
export type RequestId = string | number;

/**
 * The answer to an `initialize` request the SDK's `Server` would accept, built as that `Server` builds
 * it: the client's protocol version when supported, else the latest; Crew's capabilities, server info
 * and instructions. `undefined` for anything else.
 */
export function answerInitialize(
  message: unknown,
): { jsonrpc: '2.0'; id: RequestId; result: InitializeResult } | undefined {
  if (!isPlainObject(message) || !hasOnlyKeys(message, TOP_KEYS)) return undefined;
  const { jsonrpc, id, method, params } = message;
  if (jsonrpc !== '2.0' || method !== 'initialize' || !isRequestId(id)) return undefined;
  if (!isPlainObject(params) || '_meta' in params) return undefined;
  const { protocolVersion, capabilities, clientInfo } = params;
  if (typeof protocolVersion !== 'string') return undefined;
  if (!isStandardCapabilities(capabilities) || !isImplementation(clientInfo)) return undefined;
  return { jsonrpc: '2.0', id, result: initializeResult(protocolVersion) };
}

/**
 * The answer to `server/discover` (MCP 2026-07-28's probe, which a dual-era stdio client sends first): who
 * Crew is and the versions the bridge speaks, all after `initialize` (the bridge keeps a session upstream;
 * the stateless 2026-07-28 requests and the tasks extension are served on HTTP, `/mcp`). Answered by the
 * front whether or not the SDK has loaded: the SDK's `Server` does not know the method.
 */
export function answerDiscover(message: unknown): { id: RequestId; text: string } | undefined {
  if (!isPlainObject(message) || !hasOnlyKeys(message, TOP_KEYS)) return undefined;
  if (message.jsonrpc !== '2.0' || message.method !== 'server/discover' || !isRequestId(message.id))
    return undefined;
  const result = {
    resultType: 'complete',
    supportedVersions: SUPPORTED_PROTOCOL_VERSIONS,
    capabilities: SERVER_CAPABILITIES,
    instructions: `${SERVER_INSTRUCTIONS} Over stdio, send initialize first (versions ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}); stateless 2026-07-28 requests and the tasks extension are served by crew serve over HTTP at /mcp.`,
    _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
  };
  return { id: message.id, text: JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) };
}

/** The answer to one line read before the SDK has loaded, as the text to write; `undefined`: the SDK's to answer. */
export function answerEarly(message: unknown): { id: RequestId; text: string } | undefined {
  if (!isPlainObject(message)) return undefined;
  if (message.method === 'server/discover') return answerDiscover(message);
  if (message.method === 'initialize') {
    const answer = answerInitialize(message);
    return answer && { id: answer.id, text: JSON.stringify(answer) };
  }
  if (message.method === 'tools/list') {
    const id = toolsListId(message);
    return id === undefined
      ? undefined
      : { id, text: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"tools":${TOOL_LIST_JSON}}}` };
  }
  return undefined;
}

/**
 * The id of a `tools/list` request the SDK would answer with the bridge's tool list: no params, or params
 * with at most a string `cursor` (Crew's list is one page, so the SDK's handler ignores it).
 */
function toolsListId(message: Record<string, unknown>): RequestId | undefined {
  if (!hasOnlyKeys(message, TOP_KEYS) || message.jsonrpc !== '2.0' || !isRequestId(message.id))
    return undefined;
  const { params } = message;
  if (params === undefined) return message.id;
  if (!isPlainObject(params) || !hasOnlyKeys(params, CURSOR_KEYS)) return undefined;
  return params.cursor === undefined || typeof params.cursor === 'string' ? message.id : undefined;
}

const CURSOR_KEYS = new Set(['cursor']);

export interface InitializeResult {
  protocolVersion: string;
  capabilities: typeof SERVER_CAPABILITIES;
  serverInfo: typeof SERVER_INFO;
  instructions: string;
}

/** The result for a client that asked for `requested`. */
export function initializeResult(requested: string): InitializeResult {
  const supported = (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested);
  return {
    protocolVersion: supported ? requested : LATEST_PROTOCOL_VERSION,
    capabilities: SERVER_CAPABILITIES,
    serverInfo: SERVER_INFO,
    instructions: SERVER_INSTRUCTIONS,
  };
}

/** The SDK's JSON-RPC request schema is strict: any other top-level key makes the line invalid. */
const TOP_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/** Optional string fields of the client's `Implementation`; `icons` has a deeper schema, so it defers. */
const IMPLEMENTATION_STRINGS = ['title', 'version', 'websiteUrl', 'description'] as const;

function isRequestId(id: unknown): id is RequestId {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasOnlyKeys(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  return Object.keys(value).every((key) => keys.has(key));
}

function isImplementation(value: unknown): boolean {
  if (!isPlainObject(value) || typeof value.name !== 'string' || typeof value.version !== 'string') {
    return false;
  }
  if ('icons' in value) return false;
  return IMPLEMENTATION_STRINGS.every((key) => value[key] === undefined || typeof value[key] === 'string');
}

/** The only places the client capabilities schema holds a boolean. */
const BOOLEAN_PATHS = new Set(
  [
    ['roots', 'listChanged'],
    ['elicitation', 'form', 'applyDefaults'],
  ].map((path) => JSON.stringify(path)),
);

/**
 * Client capabilities as clients send them: objects all the way down, with booleans only where the
 * schema has them. Every value the SDK's schema wants an object for is an object here, so whatever
 * passes this, the SDK accepts; anything else (an array where an object may stand, a string in
 * `experimental`) is left to the SDK.
 */
function isStandardCapabilities(value: unknown, path: readonly string[] = []): boolean {
  if (!isPlainObject(value) || path.length > 8) return false;
  return Object.entries(value).every(([key, inner]) => {
    const at = [...path, key];
    return BOOLEAN_PATHS.has(JSON.stringify(at))
      ? typeof inner === 'boolean'
      : isStandardCapabilities(inner, at);
  });
}

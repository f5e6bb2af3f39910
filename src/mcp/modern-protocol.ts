import { SUPPORTED_PROTOCOL_VERSIONS } from './early-answers.js';

/**
 * MCP 2026-07-28 ("modern") as Crew reads it: no session and no `initialize`; every request carries its
 * version, client capabilities and (optionally) client info in `params._meta`, mirrored on HTTP in the
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers. Pure: reads a parsed body and headers, says
 * what was asked or which typed JSON-RPC error answers it (with its HTTP status). The MCP SDK Crew runs on
 * (1.x) has no 2026-07-28 support; see docs/decisions.md (issue 29) for why this is Crew's own.
 */

export const MODERN_VERSION = '2026-07-28';
/** Every version Crew speaks, newest first: the stateless one and the session-based ones. */
export const ALL_VERSIONS: readonly string[] = [MODERN_VERSION, ...SUPPORTED_PROTOCOL_VERSIONS];
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';

/** JSON-RPC error codes of 2026-07-28 (and JSON-RPC's own). */
export const ERROR = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  headerMismatch: -32020,
  missingCapability: -32021,
  unsupportedVersion: -32022,
} as const;

export type RequestId = string | number;

export interface ModernError {
  status: 400 | 404 | 500;
  id: RequestId | null;
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

export interface ModernRequest {
  id: RequestId;
  method: string;
  params: Record<string, unknown>;
  clientCapabilities: Record<string, unknown>;
  clientName?: string;
}

/** A JSON-RPC notification (no id): accepted with 202, nothing to answer. */
export interface ModernNotification {
  notification: string;
}

/** Headers as the route reads them: a name (any case) to its value, `undefined` when absent. */
export type HeaderOf = (name: string) => string | undefined;

/**
 * Whether a POST without a session is a 2026-07-28 request: it carries the version in `_meta`, names a
 * version in `MCP-Protocol-Version` that is not a session-based one, or asks for `server/discover`. Anything
 * else (an `initialize` with no `_meta`, a session's request) is the session-based endpoint's.
 */
export function isModernRequest(body: unknown, header: HeaderOf): boolean {
  const version = header('mcp-protocol-version')?.trim();
  if (version !== undefined && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version))
    return true;
  if (!isObject(body)) return false;
  if (body.method === 'server/discover') return true;
  const meta = isObject(body.params) ? body.params._meta : undefined;
  return isObject(meta) && (Object.hasOwn(meta, META_VERSION) || Object.hasOwn(meta, META_CAPABILITIES));
}

/**
 * The request, or the error that answers it, checked in the order the spec's errors need: the JSON-RPC
 * shape, the `_meta` fields (-32602), the headers against the body (-32020), then the version (-32022).
 */
export function readModernRequest(
  body: unknown,
  header: HeaderOf,
): ModernRequest | ModernNotification | ModernError {
  if (!isObject(body) || body.jsonrpc !== '2.0' || typeof body.method !== 'string') {
    return fail(
      400,
      idOf(body),
      ERROR.invalidRequest,
      'the body must be one JSON-RPC 2.0 request: {"jsonrpc":"2.0","id":1,"method":"...","params":{"_meta":{...}}}',
    );
  }
  const { method } = body;
  if (body.id === undefined) return { notification: method };
  const id = idOf(body);
  if (id === null)
    return fail(400, null, ERROR.invalidRequest, 'the request id must be a string or an integer');
  const params = body.params === undefined ? {} : body.params;
  if (!isObject(params)) return fail(400, id, ERROR.invalidParams, 'params must be an object');
  const meta = params._meta;
  if (!isObject(meta)) {
    return fail(
      400,
      id,
      ERROR.invalidParams,
      `params._meta is required in ${MODERN_VERSION}: send "${META_VERSION}" and "${META_CAPABILITIES}" in every request`,
    );
  }
  const version = meta[META_VERSION];
  if (typeof version !== 'string' || version === '') {
    return fail(
      400,
      id,
      ERROR.invalidParams,
      `params._meta["${META_VERSION}"] must name the protocol version (for example "${MODERN_VERSION}")`,
    );
  }
  const capabilities = meta[META_CAPABILITIES];
  if (!isObject(capabilities)) {
    return fail(
      400,
      id,
      ERROR.invalidParams,
      `params._meta["${META_CAPABILITIES}"] must be an object (send {} when the client declares none)`,
    );
  }
  const clientInfo = meta[META_CLIENT_INFO];
  if (clientInfo !== undefined && !(isObject(clientInfo) && typeof clientInfo.name === 'string')) {
    return fail(
      400,
      id,
      ERROR.invalidParams,
      `params._meta["${META_CLIENT_INFO}"], when sent, must be {name, version}`,
    );
  }
  const mismatch = headerMismatch(method, params, version, header);
  if (mismatch) return fail(400, id, ERROR.headerMismatch, mismatch);
  if (version !== MODERN_VERSION) {
    return fail(
      400,
      id,
      ERROR.unsupportedVersion,
      `unsupported protocol version ${version}: per request Crew speaks ${MODERN_VERSION}; ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')} are served after initialize (with a session)`,
      {
        supported: [MODERN_VERSION],
        requested: version,
      },
    );
  }
  return {
    id,
    method,
    params,
    clientCapabilities: capabilities,
    ...(isObject(clientInfo) && typeof clientInfo.name === 'string' ? { clientName: clientInfo.name } : {}),
  };
}

/** Whether the client declared `extension` in this request's capabilities. */
export function declaresExtension(request: ModernRequest, extension: string): boolean {
  const extensions = request.clientCapabilities.extensions;
  return isObject(extensions) && isObject(extensions[extension]);
}

export function isModernError(value: unknown): value is ModernError {
  return isObject(value) && typeof value.code === 'number' && typeof value.status === 'number';
}

/** `MCP-Protocol-Version`, `Mcp-Method` and (for calls) `Mcp-Name` must be sent and match the body. */
function headerMismatch(
  method: string,
  params: Record<string, unknown>,
  version: string,
  header: HeaderOf,
): string | undefined {
  const sentVersion = header('mcp-protocol-version')?.trim();
  if (sentVersion === undefined)
    return 'the MCP-Protocol-Version header is required; send the version that params._meta names';
  if (sentVersion !== version)
    return `Header mismatch: MCP-Protocol-Version header ${JSON.stringify(sentVersion)} does not match params._meta version ${JSON.stringify(version)}`;
  const sentMethod = header('mcp-method')?.trim();
  if (sentMethod === undefined) return `the Mcp-Method header is required; send ${JSON.stringify(method)}`;
  if (sentMethod !== method)
    return `Header mismatch: Mcp-Method header ${JSON.stringify(sentMethod)} does not match body method ${JSON.stringify(method)}`;
  const name = NAMED_METHODS.get(method);
  if (name === undefined) return undefined;
  const bodyName = params[name];
  const sentName = header('mcp-name')?.trim();
  if (typeof bodyName !== 'string') return undefined; // the method's own check refuses the missing name
  if (sentName === undefined)
    return `the Mcp-Name header is required for ${method}; send ${JSON.stringify(bodyName)}`;
  const decoded = decodeHeaderValue(sentName);
  if (decoded === undefined) return 'the Mcp-Name header holds malformed Base64 inside =?base64?...?=';
  if (decoded !== bodyName)
    return `Header mismatch: Mcp-Name header ${JSON.stringify(decoded)} does not match body value ${JSON.stringify(bodyName)}`;
  return undefined;
}

const NAMED_METHODS = new Map([
  ['tools/call', 'name'],
  ['resources/read', 'uri'],
  ['prompts/get', 'name'],
]);

/** A header value as sent, or the UTF-8 inside the `=?base64?...?=` sentinel; `undefined` when that is malformed. */
function decodeHeaderValue(value: string): string | undefined {
  const match = /^=\?base64\?(.*)\?=$/i.exec(value);
  if (!match) return value;
  const encoded = match[1] as string;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return undefined;
  return Buffer.from(encoded, 'base64').toString('utf8');
}

function fail(
  status: ModernError['status'],
  id: RequestId | null,
  code: number,
  message: string,
  data?: Record<string, unknown>,
): ModernError {
  return { status, id, code, message, ...(data ? { data } : {}) };
}

function idOf(body: unknown): RequestId | null {
  if (!isObject(body)) return null;
  const { id } = body;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

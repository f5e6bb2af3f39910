/**
 * The front matter of an agent file: a `---` line, `key: value` lines, a `---` line, then the body. It
 * reads the subset of YAML agent files use (no YAML library is a dependency): plain, single- and
 * double-quoted strings, numbers, booleans, null, flow lists `[a, b]`, block lists of `- item` lines, and
 * one level of block map (`env:` then indented `NAME: value` lines). Anything else (deeper maps, flow maps,
 * block scalars, anchors, tags) is an error with its line number rather than
 * a silent misreading. Unlike YAML, a plain value may contain `: `, as descriptions often do.
 */

import { setOwn } from '../core/own.js';

export type FrontScalar = string | number | boolean | null;
export type FrontValue = FrontScalar | FrontScalar[] | { [key: string]: FrontScalar };

export interface FrontMatter {
  data: Record<string, FrontValue>;
  /** 1-based line of each key (`skills`) and list item (`skills.0`), for pointing at problems. */
  lines: Map<string, number>;
  /** Everything after the closing `---`. */
  body: string;
}

export type FrontMatterResult =
  | { ok: true; value: FrontMatter }
  | { ok: false; line: number; message: string };

class FrontMatterError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

const DELIMITER = /^---[ \t]*$/;
const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?$/;
const LIST_ITEM = /^[ \t]*-(?:[ \t]+(.*))?$/;
const MAP_ENTRY = /^[ \t]+([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*))?$/;

/**
 * Splits a document into its front matter lines and its body; undefined when the document has no
 * front matter (it does not start with a `---` line).
 */
export function splitFrontMatter(
  text: string,
): { ok: true; header: string[]; body: string } | { ok: false; line: number; message: string } | undefined {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!DELIMITER.test(lines[0] ?? '')) return undefined;
  const close = lines.findIndex((line, i) => i > 0 && DELIMITER.test(line));
  if (close < 0)
    return { ok: false, line: 1, message: 'the front matter opened here is never closed by a --- line' };
  return { ok: true, header: lines.slice(1, close), body: lines.slice(close + 1).join('\n') };
}

/** Parses a document that starts with front matter; a document without any is an error at line 1. */
export function parseFrontMatter(text: string): FrontMatterResult {
  const split = splitFrontMatter(text);
  if (split === undefined) {
    return { ok: false, line: 1, message: 'expected front matter: the file must start with a --- line' };
  }
  if (!split.ok) return split;
  try {
    return { ok: true, value: { ...parseHeader(split.header), body: split.body } };
  } catch (error) {
    if (error instanceof FrontMatterError) return { ok: false, line: error.line, message: error.message };
    throw error;
  }
}

function parseHeader(header: string[]): Omit<FrontMatter, 'body'> {
  const data: Record<string, FrontValue> = {};
  const lines = new Map<string, number>();
  // A key with no value on its line: `- item` lines that follow belong to it.
  let openList: { key: string; items: FrontScalar[] } | undefined;
  // The same key's `NAME: value` lines, indented (a one-level map such as `env:`).
  let openMap: { key: string; entries: Record<string, FrontScalar> } | undefined;
  header.forEach((text, index) => {
    const line = index + 2; // the opening --- is line 1
    if (text.trim() === '' || text.trimStart().startsWith('#')) return;
    const item = LIST_ITEM.exec(text);
    if (item) {
      if (!openList || openMap)
        throw new FrontMatterError(line, 'a "- item" line must follow a key with no value, like "skills:"');
      const raw = stripComment(item[1] ?? '');
      if (raw === '') throw new FrontMatterError(line, 'empty list item');
      if (raw.startsWith('[')) throw new FrontMatterError(line, 'nested lists are not supported');
      lines.set(`${openList.key}.${openList.items.length}`, line);
      openList.items.push(parseScalar(raw, line));
      setOwn(data, openList.key, openList.items);
      return;
    }
    const entry = MAP_ENTRY.exec(text);
    if (entry && openList && (openList.items.length === 0 || openMap)) {
      openMap ??= { key: openList.key, entries: {} };
      const name = entry[1]!;
      const raw = stripComment(entry[2] ?? '');
      if (raw === '') throw new FrontMatterError(line, `"${name}:" needs a value on the same line`);
      if (Object.hasOwn(openMap.entries, name)) {
        throw new FrontMatterError(line, `duplicate key "${openMap.key}.${name}"`);
      }
      if (raw.startsWith('[') || raw.startsWith('{')) {
        throw new FrontMatterError(line, 'only one level of map is supported: give a plain value');
      }
      lines.set(`${openMap.key}.${name}`, line);
      setOwn(openMap.entries, name, parseScalar(raw, line));
      setOwn(data, openMap.key, openMap.entries);
      return;
    }
    if (/^[ \t]/.test(text)) {
      throw new FrontMatterError(line, 'unexpected indentation: keys start at the beginning of the line');
    }
    const pair = KEY_LINE.exec(text);
    if (!pair) throw new FrontMatterError(line, `expected "key: value", got ${JSON.stringify(text)}`);
    const key = pair[1]!;
    if (Object.hasOwn(data, key)) {
      throw new FrontMatterError(line, `duplicate key "${key}" (first on line ${lines.get(key)})`);
    }
    lines.set(key, line);
    const raw = stripComment(pair[2] ?? '');
    openList = undefined;
    openMap = undefined;
    if (raw === '') {
      openList = { key, items: [] };
      setOwn(data, key, null);
    } else {
      setOwn(data, key, parseValue(raw, line));
    }
  });
  return { data, lines };
}

function parseValue(raw: string, line: number): FrontValue {
  if (raw.startsWith('[')) return parseFlowList(raw, line);
  if (raw.startsWith('{')) throw new FrontMatterError(line, 'nested maps are not supported');
  if (raw.startsWith('|') || raw.startsWith('>')) {
    throw new FrontMatterError(line, 'block scalars (| and >) are not supported: use one line, or the body');
  }
  return parseScalar(raw, line);
}

function parseFlowList(raw: string, line: number): FrontScalar[] {
  if (!raw.endsWith(']')) throw new FrontMatterError(line, 'a [list] must end with ] on the same line');
  const inner = raw.slice(1, -1);
  const items: FrontScalar[] = [];
  const parts = splitOutsideQuotes(inner, line);
  parts.forEach((part, i) => {
    const item = part.trim();
    // `[a, b,]` is allowed, as in YAML; an empty item anywhere else is a mistake.
    if (item === '') {
      if (i === parts.length - 1 && (parts.length > 1 || inner.trim() === '')) return;
      throw new FrontMatterError(line, 'empty item in [list]');
    }
    if (item.startsWith('[') || item.startsWith('{'))
      throw new FrontMatterError(line, 'nested lists are not supported');
    items.push(parseScalar(item, line));
  });
  return items;
}

function splitOutsideQuotes(text: string, line: number): string[] {
  const parts: string[] = [];
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
    } else if (ch === ',') {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quote) throw new FrontMatterError(line, `unterminated ${quote} quote`);
  parts.push(text.slice(start));
  return parts;
}

/** Removes a trailing ` # comment` outside quotes. */
function stripComment(raw: string): string {
  let quote: string | undefined;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (quote) {
      if (ch === '\\' && quote === '"') i++;
      else if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") {
      if (i === 0 || /[\s[,]/.test(raw[i - 1] ?? '')) quote = ch;
    } else if (ch === '#' && (i === 0 || /\s/.test(raw[i - 1] ?? ''))) {
      return raw.slice(0, i).trim();
    }
  }
  return raw.trim();
}

const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '"': '"',
  '\\': '\\',
  '/': '/',
  '0': '\0',
};

function parseScalar(raw: string, line: number): FrontScalar {
  if (raw.startsWith('"')) return parseDoubleQuoted(raw, line);
  if (raw.startsWith("'")) {
    const end = findSingleQuoteEnd(raw);
    if (end !== raw.length - 1) throw new FrontMatterError(line, "a '...' string must end the value");
    return raw.slice(1, -1).replaceAll("''", "'");
  }
  if (/^[&*!%@`]/.test(raw)) {
    throw new FrontMatterError(
      line,
      `anchors, aliases, tags and reserved characters are not supported: ${raw}`,
    );
  }
  if (/^(true|True|TRUE)$/.test(raw)) return true;
  if (/^(false|False|FALSE)$/.test(raw)) return false;
  if (/^(null|Null|NULL|~)$/.test(raw)) return null;
  if (/^[-+]?(\d+|\d*\.\d+)([eE][-+]?\d+)?$/.test(raw)) return Number(raw);
  return raw;
}

function findSingleQuoteEnd(raw: string): number {
  for (let i = 1; i < raw.length; i++) {
    if (raw[i] !== "'") continue;
    if (raw[i + 1] === "'") i++;
    else return i;
  }
  return -1;
}

function parseDoubleQuoted(raw: string, line: number): string {
  let out = '';
  for (let i = 1; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '"') {
      if (i !== raw.length - 1) throw new FrontMatterError(line, 'a "..." string must end the value');
      return out;
    }
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = raw[++i] ?? '';
    const escaped = ESCAPES[next];
    if (escaped === undefined) throw new FrontMatterError(line, `unknown escape \\${next} in a "..." string`);
    out += escaped;
  }
  throw new FrontMatterError(line, 'unterminated " quote');
}

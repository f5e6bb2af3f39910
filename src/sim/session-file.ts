import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The simulator's sessions on disk (`--sessions DIR`), so a new process can `session/load` one an earlier
 * process opened, as real agents keep theirs. One JSON file a session, rewritten after each turn.
 */

/** Earlier prompts kept per session, and characters kept of each: a simulator's history is bounded too. */
export const MAX_HISTORY = 20;
export const MAX_PROMPT_CHARS = 500;

export interface SavedSession {
  cwd: string;
  model: string | undefined;
  effort: string | undefined;
  turns: number;
  /** The session's earlier prompts, oldest first, each cut at {@link MAX_PROMPT_CHARS}. */
  history: string[];
}

/** Only ids the simulator makes name files: a hostile id never reaches the file system. */
const SESSION_ID = /^sim-[0-9]+-[0-9]+$/;

function fileOf(dir: string, sessionId: string): string | undefined {
  return SESSION_ID.test(sessionId) ? join(dir, `${sessionId}.json`) : undefined;
}

export function saveSession(dir: string, sessionId: string, session: SavedSession): void {
  const file = fileOf(dir, sessionId);
  if (file !== undefined) writeFileSync(file, JSON.stringify(session));
}

/** The saved session, or undefined when there is none by that id. */
export function loadSavedSession(dir: string, sessionId: string): SavedSession | undefined {
  const file = fileOf(dir, sessionId);
  if (file === undefined) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as SavedSession;
  } catch {
    return undefined;
  }
}

/** `history` with `prompt` added, bounded. */
export function withPrompt(history: readonly string[], prompt: string): string[] {
  return [...history, prompt.slice(0, MAX_PROMPT_CHARS)].slice(-MAX_HISTORY);
}

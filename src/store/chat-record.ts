/**
 * A hosted chat as the store keeps it (issue 12 §4), so a restarted daemon can continue it: the parent
 * agent and its session, the last turns (what a reconnecting person is shown again) and the completion
 * events already injected (an event handed over again after a restart is acknowledged, not injected
 * twice). The events still to inject are not here: they are the chat's pending outbox events
 * (`chat:<id>`), which the relay hands over again once the chat is back.
 *
 * The chat bounds what it writes (`chat.turns_kept` turns, each text cut); the store keeps what it is
 * given, one record per open chat, and forgets it when the chat closes.
 */
export interface ChatRecord {
  id: string;
  /** The agent hosted as the parent (a name from `agents`). */
  agent: string;
  cwd: string;
  createdAt: number;
  /** When a turn last began or ended: the least recently active chat goes first beyond the bound. */
  activeAt: number;
  /** The parent's ACP session, to `session/load` when the agent can. */
  sessionId?: string;
  /** Turns started since the chat began (the number of the last one). */
  turnCount: number;
  /** The last turns, oldest first. */
  turns: ChatTurnRecord[];
  /** Completion events injected, the most recent last. */
  injected: string[];
  /**
   * How many times the chat was opened (first start and each restore). Life `n` numbers its events from
   * `(n - 1) × CHAT_SEQ_BLOCK`, so event ids keep rising across restarts. @default 1
   */
  lives?: number;
}

export interface ChatTurnRecord {
  turn: number;
  kind: 'message' | 'injection';
  /** The person's message, or the injected events' text (cut). */
  text: string;
  /** The injected events (an injection turn), without their text. */
  events?: { id: string; kind: string; run_ids: string[]; batch_id?: string }[];
  /** The parent's answer so far (cut). */
  answer: string;
  at: number;
  endedAt?: number;
  stopReason?: string;
  error?: string;
}

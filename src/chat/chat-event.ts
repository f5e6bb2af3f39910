/**
 * What a hosted chat tells its subscribers (the terminal `crew chat`, the HTTP event stream, later a
 * dashboard or Slack): the turns in order, the parent's text as it streams, the completion events as they
 * are injected, and notices about the parent's process. One shape for every surface (DESIGN §6, Shapes).
 */

/** A completion event (or digest, or notice) as it was injected into the chat. */
export interface InjectedEvent {
  id: string;
  kind: string;
  run_ids: string[];
  batch_id?: string;
  text: string;
}

export type ChatEvent =
  /** A person's message starts turn `turn`. */
  | { type: 'message'; turn: number; text: string }
  /** Completion events start turn `turn` (one injection turn may carry several). */
  | { type: 'injected'; turn: number; events: InjectedEvent[] }
  /** A piece of the parent's answer in turn `turn` (0 = outside any turn). */
  | { type: 'text'; turn: number; text: string }
  /** Turn `turn` ended: with the agent's stop reason, or with an error (its process died, it failed). */
  | { type: 'turn_ended'; turn: number; stop_reason?: string; error?: string }
  /** Something the person should know: the parent's process died, a fresh session started. */
  | { type: 'notice'; text: string }
  /** The chat is closed; nothing follows. */
  | { type: 'closed'; reason: string };

/** A chat event as stored and streamed: numbered from 1 in the chat, with its time. */
export type NumberedChatEvent = ChatEvent & { seq: number; at: string };

/** How a turn a person asked for ended. */
export type TurnOutcome = { turn: number; stop_reason: string } | { turn: number; error: string };

/** A chat as every surface shows it. */
export interface ChatView {
  id: string;
  /** The parent key its runs are attributed to: `chat:<id>`. */
  parent: string;
  agent: string;
  cwd: string;
  state: ChatState;
  /** The parent runtime's pid while it runs. */
  pid?: number;
  session_id?: string;
  created_at: string;
  /** Turns started so far (person and injection). */
  turns: number;
  /** Completion events handed to the chat and not yet injected. */
  pending_events: number;
  /** Person messages waiting for their turn. */
  queued_messages: number;
}

/** `starting`: the parent process or session is being opened; `busy`: a turn runs. */
export type ChatState = 'starting' | 'idle' | 'busy' | 'closed';

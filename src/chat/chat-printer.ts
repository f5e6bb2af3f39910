import { assertNever } from '../core/types.js';
import type { ChatEvent } from './chat-event.js';

/**
 * A chat's events as terminal lines (`crew chat`): the parent's text line by line as it streams (a
 * partial line waits for its end or the turn's), each injected completion event as its header lines,
 * notices and failed turns marked. Pure apart from the lines it hands to `out` and `err`.
 */
export class ChatPrinter {
  private partial = '';

  constructor(
    private readonly out: (line: string) => void,
    private readonly err: (line: string) => void,
  ) {}

  print(event: ChatEvent): void {
    switch (event.type) {
      case 'message':
        return;
      case 'text': {
        const lines = (this.partial + event.text).split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) this.out(line);
        return;
      }
      case 'injected':
        this.flush();
        for (const injected of event.events) {
          for (const line of headerLines(injected.text)) this.out(`« ${line}`);
        }
        return;
      case 'turn_ended':
        this.flush();
        if (event.error !== undefined) this.err(`crew: the turn failed: ${event.error}`);
        else if (event.stop_reason !== undefined && event.stop_reason !== 'end_turn')
          this.out(`[turn ended: ${event.stop_reason}]`);
        return;
      case 'notice':
        this.flush();
        this.out(`[crew] ${event.text}`);
        return;
      case 'closed':
        this.flush();
        this.out(`[crew] chat closed (${event.reason})`);
        return;
      default:
        assertNever(event);
    }
  }

  /** Prints a partial line still held. */
  flush(): void {
    if (this.partial === '') return;
    this.out(this.partial);
    this.partial = '';
  }
}

/** An event's header lines (completion event, digest and member headers, notices), else its first line. */
function headerLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  const headers = lines.filter((line) => /^\[(Subagent completion (event|digest)|Crew notice)\]/.test(line));
  return headers.length > 0 ? headers : lines.slice(0, 1);
}

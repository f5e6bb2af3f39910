/**
 * The text a parent receives when a run ends (DESIGN §6): one completion event per single run, one digest
 * per wave. Pure: the caller reads the transcript (or just its head and tail) and passes the output in.
 */
import { countChars, type KeepMode, type Truncated, truncate } from './truncate.js';

/** One ended run, as its completion event shows it. */
export interface CompletionMember {
  id: string;
  agent: string;
  /** The terminal status (`completed`, `failed`, `timed_out`, `cancelled`, `lost`). */
  status: string;
  /** Wall time from start to end; 0 for a run that never started. */
  durationSecs: number;
  /**
   * The run's output: the whole text (cut here per the options), or a preview already cut from the
   * transcript file (see `readPreview`), whose `total` is the whole transcript's length.
   */
  output: string | Truncated;
  /** Where the full transcript is (`$CREW_HOME/subagents/<id>/result.txt`). */
  resultPath: string;
  /** Why the run failed or was lost; shown on the header line. */
  error?: string;
  /** A stop note (`turn_limit`, `max_tokens`, …) for a run that completed short of its own end. */
  stop?: string;
}

export interface CompletionOptions {
  /** Which part of the output the preview keeps (`agent.completion_keep`). */
  keep: KeepMode;
  /** Preview length in chars; 0 disables truncation (`agent.completion_keep_chars`). */
  keepChars: number;
  /**
   * The line after a cut preview, for a reader who cannot open the server's file (Slack): given the
   * run and how many whole lines the preview shows. @default the transcript's path and `spawn_status`
   */
  readMore?: (member: CompletionMember, shownLines: number) => string;
}

/** The first line of every completion event; parents may look for it. */
export const COMPLETION_EVENT_TAG = '[Subagent completion event]';
/** The first line of a wave's digest. */
export const COMPLETION_DIGEST_TAG = '[Subagent completion digest]';
/** A digest's previews stop once the whole text would pass this many × `keepChars`. */
export const DIGEST_BUDGET_FACTOR = 4;
/** Shown in place of an empty preview, so the event never has a blank body. */
export const NO_OUTPUT_LINE = '(no output)';
/** Longest `error=` reason on a header line; the rest is in the transcript and `spawn_status`. */
export const ERROR_REASON_MAX_CHARS = 300;

/** One run's completion event: header, preview, and a `[truncated: …]` line when the preview was cut. */
export function formatCompletion(member: CompletionMember, options: CompletionOptions): string {
  return memberBlock(member, previewOf(member, options), options.keep, options.readMore);
}

/**
 * One event for a whole wave. Every member is listed (id, agent, status, duration); previews are added in
 * member order while the whole text stays within {@link DIGEST_BUDGET_FACTOR} × `keepChars` chars, and
 * the members from the first one that does not fit on get their header line only, with one closing line
 * saying how many were left without a preview (a pointer per member would crowd out every preview of a
 * large wave). With `keepChars` 0 there is no bound. The header lines alone may pass the bound for a very
 * large wave: listing every member comes first.
 */
export function formatDigest(
  batchId: string,
  members: readonly CompletionMember[],
  options: CompletionOptions,
): string {
  const digest = new DigestBuilder(batchId, members, options);
  for (const member of members) if (!digest.offer(member.output)) break;
  return digest.text();
}

/** A wave member before its preview is read: everything its header line needs. */
export type DigestMember = Omit<CompletionMember, 'output'>;

/**
 * A digest built member by member, so the caller reads only the previews that fit: `offer` the next
 * member's output in order until it answers false (that preview and every later one are left out), then
 * take `text()`. {@link formatDigest} is this with every output at hand.
 */
export class DigestBuilder {
  private readonly budgetChars: number;
  private readonly header: string;
  private readonly headers: string[];
  private readonly blocks: string[];
  private usedChars: number;
  private previews = 0;
  private full = false;

  constructor(
    batchId: string,
    private readonly members: readonly DigestMember[],
    private readonly options: CompletionOptions,
  ) {
    this.budgetChars =
      options.keepChars > 0 ? DIGEST_BUDGET_FACTOR * options.keepChars : Number.POSITIVE_INFINITY;
    this.header = digestHeader(batchId, members);
    this.headers = members.map(completionHeader);
    this.blocks = [...this.headers];
    // One closing line names the members left without a preview; counted at its longest so it always fits.
    this.usedChars =
      countChars(this.header) +
      sum(this.headers.map((line) => countChars(line) + 1)) +
      countChars(noPreviewLine(members.length, members.length, this.budgetChars)) +
      1;
  }

  /** Whether another preview is wanted: false once one did not fit or every member has one. */
  get wantsMore(): boolean {
    return !this.full && this.previews < this.members.length;
  }

  /** The next member's output, in member order; false when it does not fit (nothing more is taken). */
  offer(output: CompletionMember['output']): boolean {
    if (!this.wantsMore) return false;
    const i = this.previews;
    const member = { ...(this.members[i] as DigestMember), output };
    const block = formatCompletion(member, this.options);
    const extraChars = countChars(block) - countChars(this.headers[i] as string);
    if (this.usedChars + extraChars > this.budgetChars) {
      this.full = true;
      return false;
    }
    this.blocks[i] = block;
    this.usedChars += extraChars;
    this.previews++;
    return true;
  }

  text(): string {
    const missing = this.members.length - this.previews;
    return [
      this.header,
      ...this.blocks,
      ...(missing > 0 ? [noPreviewLine(missing, this.members.length, this.budgetChars)] : []),
    ].join('\n');
  }
}

/** The header line of one event: `[Subagent completion event] id=… agent=… status=… duration=…s`. */
export function completionHeader(member: DigestMember): string {
  let line = `${COMPLETION_EVENT_TAG} id=${member.id} agent=${member.agent} status=${member.status} duration=${formatSecs(member.durationSecs)}s`;
  if (member.stop) line += ` stop=${member.stop}`;
  if (member.error) line += ` error=${oneLine(member.error, ERROR_REASON_MAX_CHARS)}`;
  return line;
}

/** Seconds with at most one decimal (`12.3`, `4`); negative or non-finite durations show as 0. */
export function formatSecs(secs: number): string {
  if (!Number.isFinite(secs) || secs <= 0) return '0';
  return String(Math.round(secs * 10) / 10);
}

function previewOf(member: CompletionMember, options: CompletionOptions): Truncated {
  return typeof member.output === 'string' ? truncate(member.output, options) : member.output;
}

function memberBlock(
  member: CompletionMember,
  preview: Truncated,
  keep: KeepMode,
  readMore?: CompletionOptions['readMore'],
): string {
  const body = trimTrailingNewlines(preview.text);
  const lines = [completionHeader(member), body === '' ? NO_OUTPUT_LINE : body];
  if (preview.truncated && readMore && keep === 'head') {
    lines.push(readMore(member, countLineEnds(preview.text)));
  } else if (preview.truncated) {
    lines.push(
      `[truncated: kept ${preview.kept} of ${preview.total} chars (${keep}); full transcript: ${member.resultPath}; read more with spawn_status]`,
    );
  }
  return lines.join('\n');
}

function noPreviewLine(missing: number, total: number, budgetChars: number): string {
  return `[no preview for the last ${missing} of ${total} members: digest bound of ${budgetChars} chars reached; read each with spawn_status <id>]`;
}

function digestHeader(batchId: string, members: readonly DigestMember[]): string {
  const counts = new Map<string, number>();
  for (const member of members) counts.set(member.status, (counts.get(member.status) ?? 0) + 1);
  const tally = [...counts].map(([status, count]) => ` ${status}=${count}`).join('');
  return `${COMPLETION_DIGEST_TAG} batch=${batchId} members=${members.length}${tally}`;
}

/** Collapses whitespace so a reason stays on the header line, and bounds it. */
function oneLine(text: string, maxChars: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return countChars(flat) > maxChars
    ? `${truncate(flat, { keep: 'head', keepChars: maxChars - 1 }).text}…`
    : flat;
}

// A loop, not /\n+$/: that regex retries at every newline of a long run, quadratic on hostile output.
function trimTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === 10 || text.charCodeAt(end - 1) === 13)) end--;
  return text.slice(0, end);
}

function countLineEnds(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

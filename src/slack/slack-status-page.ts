/** A page of a run's transcript as `spawn status <id> [offset=N]` shows it in Slack (issue 28). */
export interface StatusPage {
  /** Whole lines, at most the char budget (one over-long line is cut and marked `…`). */
  text: string;
  /** `lines 41–80 of 300`, or '' when the transcript is empty. */
  range: string;
  /** The offset of the first line not shown, when there is one: the next page's `offset=`. */
  next?: number;
}

/**
 * Fits a `spawn_status` page into one Slack reply: the gateway's `[lines …]` header is replaced by a
 * range line, and the lines are kept whole up to `maxChars`, so the next page starts at the first line
 * not shown (never skipping part of a line the char cut dropped).
 */
export function statusPage(
  answer: { text?: string; from_line?: number; to_line?: number; total_lines?: number },
  offset: number,
  maxChars: number,
): StatusPage {
  const raw = answer.text ?? '';
  const body = raw.startsWith('[lines ') ? raw.slice(raw.indexOf('\n') + 1 || raw.length) : raw;
  const lines = body === '' ? [] : body.split('\n');
  const kept: string[] = [];
  let chars = 0;
  for (const line of lines) {
    if (kept.length > 0 && chars + line.length + 1 > maxChars) break;
    kept.push(line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : line);
    chars += line.length + 1;
  }
  const total = answer.total_lines;
  const shownTo = offset + kept.length;
  const range =
    total === undefined || total === 0 || kept.length === 0
      ? total !== undefined && offset >= total && total > 0
        ? `past the end: the transcript has ${total} lines`
        : ''
      : `lines ${offset + 1}–${shownTo} of ${total}`;
  const more = total !== undefined ? shownTo < total : kept.length < lines.length;
  return { text: kept.join('\n'), range, ...(more && kept.length > 0 ? { next: shownTo } : {}) };
}

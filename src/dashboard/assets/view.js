// What the dashboard shows, worded and measured for a person: parent names, sizes, durations, a run's
// fields, the capacity chart's geometry. Pure functions (no DOM), so node's tests import them as they are.

/**
 * A parent key as a person reads it: `mcp:claude-code@myproject` is `claude-code@myproject`, a session's
 * own id (`mcp:<uuid>`) is "MCP session bc5b9186", or "claude-code (session bc5b9186)" when its client
 * named itself (`name`, from `initialize`), Slack, chat, CLI, run and cluster parents say what they are.
 * `title` keeps the whole key (hover, copy). The CLI says the same through src/core/parent-label.ts; a
 * test holds the two equal, so change both.
 */
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function parentLabel(key, name) {
  const text = String(key ?? '');
  const colon = text.indexOf(':');
  const kind = colon < 0 ? '' : text.slice(0, colon);
  const rest = colon < 0 ? text : text.slice(colon + 1);
  if (kind === 'mcp') {
    if (SESSION_ID.test(rest)) {
      const label = name ? `${name} (session ${rest.slice(0, 8)})` : `MCP session ${rest.slice(0, 8)}`;
      return { kind: 'agent', label, title: text };
    }
    return { kind: 'agent', label: rest === 'stateless' ? 'MCP (stateless)' : rest, title: text };
  }
  if (kind === 'slack') return { kind: 'person', label: `Slack ${rest}`, title: text };
  if (kind === 'chat') return { kind: 'person', label: `chat ${rest}`, title: text };
  if (kind === 'cli') return { kind: 'person', label: cliLabel(rest), title: text };
  if (kind === 'run') return { kind: 'run', label: `run ${rest}`, title: text };
  if (kind === 'cluster') {
    const label = name ? `${name} (via gateway ${rest})` : `gateway ${rest}`;
    return { kind: 'agent', label, title: text };
  }
  return { kind: 'other', label: text || '(none)', title: text };
}

function cliLabel(rest) {
  if (rest === 'log' || rest === 'operator') return 'CLI';
  if (rest === 'dashboard') return 'dashboard re-run';
  if (SESSION_ID.test(rest)) return `CLI --wait (${rest.slice(0, 8)})`;
  return `CLI (${rest})`;
}

/** A size in GiB (as runs report it) in MB below 1 GiB, else GB: 0.0885 → "91 MB". */
export function fmtMemory(gb) {
  if (typeof gb !== 'number' || !Number.isFinite(gb)) return '';
  if (gb < 1) return `${Math.max(1, Math.round(gb * 1024))} MB`;
  return `${gb < 10 ? gb.toFixed(1) : Math.round(gb)} GB`;
}

/** Seconds as a person says them: "0.4 s", "12 s", "3 min 5 s", "2 h 14 min". */
export function fmtDuration(secs) {
  if (typeof secs !== 'number' || !Number.isFinite(secs) || secs < 0) return '';
  if (secs < 10) return `${secs.toFixed(1)} s`;
  if (secs < 60) return `${Math.round(secs)} s`;
  const m = Math.floor(secs / 60);
  if (m < 60) return `${m} min ${Math.floor(secs % 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Characters of output: "320 chars", "12.4 k chars", "1.2 M chars". */
export function fmtChars(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  if (n < 1000) return `${n} chars`;
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)} k chars`;
  return `${(n / 1_000_000).toFixed(1)} M chars`;
}

/** A count with thousands separated: 12345 → "12,345". */
export function fmtCount(n) {
  return typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '';
}

/** An ISO time as the local clock time and how long ago: "14:03:22 (3 min ago)". */
export function fmtWhen(iso, now = Date.now()) {
  const at = Date.parse(iso ?? '');
  if (Number.isNaN(at)) return '';
  const clock = new Date(at).toLocaleTimeString([], { hour12: false });
  const ago = (now - at) / 1000;
  return ago >= 0 ? `${clock} (${fmtDuration(ago)} ago)` : clock;
}

/**
 * A run's fields for the detail panel, labelled and formatted, the empty ones left out; everything not
 * named here still appears, under its own key, so nothing the API gives is hidden.
 */
export function runFields(run, now = Date.now(), parentName = undefined) {
  const usage = run.usage ?? {};
  const duration =
    run.duration_secs ??
    (run.started_at && !run.ended_at ? (now - Date.parse(run.started_at)) / 1000 : undefined);
  const rows = [
    ['Status', run.status + (run.stop ? ` (${run.stop})` : '')],
    ['Agent', run.agent],
    ['Parent', parentLabel(run.parent, parentName ?? run.parent_name).label],
    ['Wave', run.batch_id ?? ''],
    ['Conversation', run.conversation ?? ''],
    ['Nesting depth', run.depth > 1 ? String(run.depth) : ''],
    ['Created', fmtWhen(run.created_at, now)],
    ['Started', fmtWhen(run.started_at, now)],
    ['Ended', fmtWhen(run.ended_at, now)],
    ['Duration', fmtDuration(duration)],
    [
      'Waiting for',
      run.waiting_for
        ? `${run.waiting_for}${run.hold_until ? ` until ${fmtWhen(run.hold_until, now)}` : ''}`
        : '',
    ],
    ['Peak memory', fmtMemory(run.peak_mem_gb)],
    ['Output', fmtChars(run.result_chars)],
    ['Result file', run.result_path ?? ''],
    ['Error', run.error ?? ''],
    ['Error kind', run.error_kind ?? ''],
    [
      'Tokens in / out',
      usage.input_tokens !== undefined
        ? `${fmtCount(usage.input_tokens)} / ${fmtCount(usage.output_tokens)}`
        : '',
    ],
    ['Context tokens', fmtCount(usage.context_tokens ?? usage.tokens)],
    [
      'Model requests',
      usage.requests !== undefined
        ? `${fmtCount(usage.requests)}${usage.rate_limited ? ` (${usage.rate_limited} rate-limited)` : ''}`
        : '',
    ],
    ['Cost', typeof usage.cost_usd === 'number' ? `$${usage.cost_usd.toFixed(4)}` : ''],
    ['Delivery', run.delivery],
    ['Acknowledged', fmtWhen(run.acked_at, now)],
    ['Lost output', run.transcript_gap ? `${fmtCount(run.transcript_gap)} bytes` : ''],
    ['Host', run.host ?? ''],
    ['Workspace', run.workspace ? workspaceText(run.workspace) : ''],
    ['Task', run.task_preview],
  ];
  return rows.filter(([, value]) => value !== '' && value !== undefined && value !== null);
}

function workspaceText(w) {
  const parts = [
    w.branch,
    w.files_changed !== undefined ? `${w.files_changed} files changed` : '',
    w.conflicts?.length ? `${w.conflicts.length} conflicts` : '',
  ];
  return parts.filter(Boolean).join(' · ') || JSON.stringify(w);
}

/**
 * The capacity chart's geometry: polyline points for running, queued, cap and provider cap over the
 * samples (oldest left), scaled to `width` × `height` with the peak of any series at the top.
 */
export function chartModel(samples, width, height) {
  const list = Array.isArray(samples) ? samples : [];
  const series = ['running', 'queued', 'cap', 'provider_cap'];
  let max = 1;
  for (const s of list) for (const key of series) if (typeof s[key] === 'number') max = Math.max(max, s[key]);
  const n = list.length;
  const x = (i) => (n <= 1 ? width : (i / (n - 1)) * width);
  const y = (v) => height - (v / max) * height;
  const points = {};
  for (const key of series) {
    const pts = [];
    list.forEach((s, i) => {
      if (typeof s[key] !== 'number') return;
      // One sample draws a flat line across, so a fresh daemon's chart is not empty.
      if (n === 1) pts.push(`0,${y(s[key]).toFixed(1)}`);
      pts.push(`${x(i).toFixed(1)},${y(s[key]).toFixed(1)}`);
    });
    points[key] = pts.join(' ');
  }
  const last = list.at(-1) ?? {};
  return { max, points, last, minutes: n };
}

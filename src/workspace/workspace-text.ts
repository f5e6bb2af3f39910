import type { WorkspaceFacts } from '../core/workspace-facts.js';
import type { RunRecord } from '../store/store.js';

/**
 * The workspace lines of a completion event and of a wave's digest (issue 31): what changed on which
 * branch, and which changes conflict, so the parent knows what to merge before it tries.
 */
export function workspaceLine(id: string, ws: WorkspaceFacts): string {
  const parts = [`[workspace] id=${id} branch=${ws.branch} base=${ws.base.slice(0, 12)}`];
  if (ws.head !== undefined) parts.push(`head=${ws.head.slice(0, 12)}`);
  if (ws.filesChanged !== undefined)
    parts.push(`files=${ws.filesChanged} (+${ws.insertions ?? 0} -${ws.deletions ?? 0})`);
  if (ws.committedForAgent)
    parts.push(`crew committed ${ws.committedForAgent} file(s) the agent left uncommitted`);
  if (ws.sandbox) parts.push('sandboxed');
  let line = parts.join(' ');
  const files = ws.files ?? [];
  if (files.length > 0)
    line += `\n${files
      .slice(0, 20)
      .map((f) => `  ${f.path} +${f.insertions} -${f.deletions}`)
      .join(
        '\n',
      )}${files.length > 20 ? `\n  … ${(ws.filesChanged ?? files.length) - 20} more (spawn_status)` : ''}`;
  for (const conflict of ws.conflicts ?? []) line += `\n${conflictLine(id, conflict.with, conflict.files)}`;
  return line;
}

function conflictLine(id: string, other: string, files: readonly string[]): string {
  const what = other === 'base' ? 'the base branch tip' : other;
  return `[conflict] ${id} x ${what}: ${files.join(', ')}`;
}

/** A digest's workspace section: every conflict among its members (and with the base), then merge advice. */
export function digestWorkspaceText(records: readonly RunRecord[], batchId: string): string {
  const isolated = records.filter((r) => r.workspace !== undefined);
  if (isolated.length === 0) return '';
  const lines: string[] = [];
  const conflicting = new Set<string>();
  for (const record of isolated) {
    for (const conflict of record.workspace?.conflicts ?? []) {
      conflicting.add(record.run.id);
      if (conflict.with !== 'base') conflicting.add(conflict.with);
      lines.push(conflictLine(record.run.id, conflict.with, conflict.files));
    }
  }
  const changed = isolated.filter((r) => (r.workspace?.filesChanged ?? 0) > 0).map((r) => r.run.id);
  const clean = changed.filter((id) => !conflicting.has(id));
  const head = `[workspaces] ${changed.length} of ${isolated.length} members changed files; conflicting: ${conflicting.size === 0 ? 'none' : [...conflicting].join(', ')}`;
  const advice = `merge the ${clean.length} that do not conflict with spawn_merge batch_id=${batchId} target=<branch>`;
  return [head, ...lines, advice].join('\n');
}

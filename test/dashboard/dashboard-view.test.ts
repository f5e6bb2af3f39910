import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The page's wording (src/dashboard/assets/view.js, served as it is to the browser): parent names, sizes,
 * durations, a run's fields and the capacity chart's geometry.
 */

// biome-ignore lint/suspicious/noExplicitAny: a plain ES module of the page, without type declarations
const view: any = await import(pathToFileURL(join(process.cwd(), 'src/dashboard/assets/view.js')).href);

describe('what the page shows a person', () => {
  it('parent keys read as names: the client and project, a short session id, Slack, chat, CLI', () => {
    expect(view.parentLabel('mcp:claude-code@myproject').label).toBe('claude-code@myproject');
    expect(view.parentLabel('mcp:bc5b9186-1f2e-4a3b-9c8d-0123456789ab')).toEqual({
      kind: 'agent',
      label: 'MCP session bc5b9186',
      title: 'mcp:bc5b9186-1f2e-4a3b-9c8d-0123456789ab',
    });
    expect(view.parentLabel('slack:U123').label).toBe('Slack U123');
    expect(view.parentLabel('chat:c1').kind).toBe('person');
    expect(view.parentLabel('cli:operator').label).toBe('CLI');
    expect(view.parentLabel('run:r1').label).toBe('run r1');
    expect(view.parentLabel('').label).toBe('(none)');
  });

  it('numbers are rounded for reading: 0.0885 GiB is 91 MB, durations in s / min / h', () => {
    expect(view.fmtMemory(0.08849334716796875)).toBe('91 MB');
    expect(view.fmtMemory(0.0001)).toBe('1 MB');
    expect(view.fmtMemory(2.345)).toBe('2.3 GB');
    expect(view.fmtMemory(undefined)).toBe('');
    expect(view.fmtDuration(0.42)).toBe('0.4 s');
    expect(view.fmtDuration(42.4)).toBe('42 s');
    expect(view.fmtDuration(185)).toBe('3 min 5 s');
    expect(view.fmtDuration(8040)).toBe('2 h 14 min');
    expect(view.fmtDuration(Number.NaN)).toBe('');
    expect(view.fmtChars(12_400)).toBe('12.4 k chars');
  });

  it('a run’s fields are labelled and formatted, the empty ones left out', () => {
    const fields = new Map(
      view.runFields(
        {
          id: 'r1',
          status: 'completed',
          agent: 'sim',
          parent: 'mcp:claude-code@p',
          depth: 1,
          task_preview: 'do it',
          created_at: '2026-01-01T00:00:00.000Z',
          duration_secs: 75,
          peak_mem_gb: 0.08849334716796875,
          delivery: 'delivered',
        },
        Date.parse('2026-01-01T00:10:00.000Z'),
      ),
    );
    expect(fields.get('Peak memory')).toBe('91 MB');
    expect(fields.get('Duration')).toBe('1 min 15 s');
    expect(fields.get('Parent')).toBe('claude-code@p');
    expect(fields.has('Error')).toBe(false);
    expect(fields.get('Created')).toMatch(/\(10 min 0 s ago\)$/);
  });

  it('the chart scales every series to the peak; one sample draws a flat line across', () => {
    const one = view.chartModel([{ running: 2, queued: 4, cap: 4, provider_cap: null }], 100, 10);
    expect(one.max).toBe(4);
    expect(one.points.running).toBe('0,5.0 100.0,5.0');
    expect(one.points.provider_cap).toBe('');
    const two = view.chartModel(
      [
        { running: 0, queued: 8, cap: 4, provider_cap: 2 },
        { running: 4, queued: 0, cap: 4, provider_cap: 2 },
      ],
      100,
      10,
    );
    expect(two.points.queued).toBe('0.0,0.0 100.0,10.0');
    expect(two.points.running).toBe('0.0,10.0 100.0,5.0');
    expect(view.chartModel([], 100, 10).minutes).toBe(0);
  });
});

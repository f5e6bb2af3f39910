import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, defaultConfig, parseConfig, parseKeyValue } from '../../src/core/config-schema.js';

describe('config schema (DESIGN §4)', () => {
  it('has the documented defaults', () => {
    const c = defaultConfig();
    expect(c['agent.max_subagents']).toBe(0);
    expect(c['agent.subagent_auto_max']).toBe(32);
    expect(c['agent.subagent_mem_buffer_pct']).toBe(20);
    expect(c['agent.subagent_cost_gb']).toBe(0.5);
    expect(c['agent.subagent_cpu_cost_cores']).toBe(1);
    expect(c['agent.spawn_min_memory_gb']).toBe(4);
    expect(c['agent.reservation_buffer_gb']).toBe(2);
    expect(c['agent.pause_margin_gb']).toBe(2.5);
    expect(c['agent.subagent_spawn_stagger_secs']).toBe(2);
    expect(c['agent.subagent_timeout_secs']).toBe(1800);
    expect(c['agent.subagent_delivery_timeout_secs']).toBe(1200);
    expect(c['agent.subagent_max_queued']).toBe(32);
    expect(c['agent.subagent_max_queued_wave_members']).toBe(5000);
    expect(c['agent.subagent_batch_max']).toBe(1000);
    expect(c['agent.subagent_max_depth']).toBe(1);
    expect(c['agent.subagent_max_children']).toBe(5);
    expect(c['agent.completion_keep']).toBe('head');
    expect(c['agent.completion_keep_chars']).toBe(3000);
    expect(c['agent.transcript_max_bytes']).toBe(67_108_864);
    expect(c['hooks.claude.max_in_flight']).toBe(5);
    expect(c['hooks.claude.scope']).toBe('session');
    expect(c['agent.run_retention_secs']).toBe(7 * 86_400);
    expect(c['agent.run_history_max']).toBe(100_000);
    expect(c['dashboard.read_only']).toBe(false);
    expect(c['slack.bot_token']).toBe('');
    expect(c['slack.allowed_users']).toEqual([]);
    expect(c['slack.reannounce_secs']).toBe(3600);
    expect(c['host.oom_score_adj']).toBe(500);
    expect(c['host.spawner']).toBe('auto');
    expect(c['metrics.token']).toBe('');
    expect(c['workspace.unmerged_keep_secs']).toBe(604_800);
    expect(c['workspace.max_branches']).toBe(500);
    expect(c['workspace.sandbox_default']).toBe(false);
    expect(c['workspace.bwrap_path']).toBe('bwrap');
    expect(c['agent.acp_request_timeout_secs']).toBe(30);
    expect(Object.keys(CONFIG_KEYS)).toHaveLength(84);
  });

  it.each([
    [1, 3],
    [2, 3],
  ])('agent.max_subagents %i is raised to %i with a clamp event', (value, raised) => {
    const r = parseConfig({ 'agent.max_subagents': value });
    if (!r.ok) throw new Error('refused');
    expect(r.config['agent.max_subagents']).toBe(raised);
    expect(r.clamped).toEqual([
      { key: 'agent.max_subagents', from: value, to: 3, reason: expect.any(String) },
    ]);
  });

  it('keeps 0 (auto) and pinned values as they are', () => {
    for (const value of [0, 3, 64]) {
      const r = parseConfig({ 'agent.max_subagents': value });
      expect(r.ok && r.config['agent.max_subagents']).toBe(value);
      expect(r.ok && r.clamped).toEqual([]);
    }
  });

  it('raises agent.subagent_auto_max below 3', () => {
    const r = parseConfig({ 'agent.subagent_auto_max': 1 });
    expect(r.ok && r.config['agent.subagent_auto_max']).toBe(3);
    expect(r.ok && r.clamped.map((c) => c.key)).toEqual(['agent.subagent_auto_max']);
  });

  it('lists every problem with key, expected and got', () => {
    const r = parseConfig({
      'agent.max_subagents': -1,
      'agent.completion_keep': 'middle',
      'agent.session_sharing': 'yes',
      'agent.no_such_key': 1,
      'agents.bad': { runner: 'ssh', command: [] },
    });
    if (r.ok) throw new Error('accepted');
    const keys = r.problems.map((p) => p.key);
    expect(keys).toEqual(
      expect.arrayContaining([
        'agent.max_subagents',
        'agent.completion_keep',
        'agent.session_sharing',
        'agent.no_such_key',
        'agents.bad.runner',
        'agents.bad.command',
      ]),
    );
    const keep = r.problems.find((p) => p.key === 'agent.completion_keep');
    expect(keep?.got).toBe('"middle"');
    expect(keep?.expected).toContain('head');
    expect(r.problems.find((p) => p.key === 'agent.session_sharing')?.expected).toBe('boolean');
  });

  it('rejects a non-object config', () => {
    for (const raw of [null, [], 'x', 3]) expect(parseConfig(raw).ok).toBe(false);
  });

  it('parses named agents: a command string becomes an argv, never a shell line', () => {
    const r = parseKeyValue('agents.reviewer', { command: 'claude-agent-acp --verbose', shared: true });
    expect(r.ok && r.value).toMatchObject({
      command: ['claude-agent-acp', '--verbose'],
      runner: 'acp',
      shared: true,
    });
    expect(parseKeyValue('agents.../x', { command: 'x' }).ok).toBe(false);
  });
});

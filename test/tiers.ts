/**
 * Which test file runs in which tier (vitest project; see `vitest.config.ts` and docs/decisions.md).
 *
 * - **integration**: a file that starts a process (the simulator, the CLI, the hook, `node -e`, `sleep`)
 *   or opens a socket (a daemon, an HTTP server), directly or through a helper, or that reaches into
 *   state its process shares with other threads (closes descriptors by number, measures RSS). Runs in
 *   `forks`, a process per file.
 * - **slow**: opt-in cases, run on CI (`CI=true`) or with `CREW_SLOW=1`: a real agent CLI from the
 *   registry, the 100 MB paging test, and any file that takes over ~20 s alone on 2 cores (the daemon
 *   fuzz: 5,000 MCP calls, 500 per tool). Runs in `forks`, beside the integration tier.
 * - **unit**: everything else (the core, stores, transcripts, in-process gateways on the fake runner).
 *   Runs in `threads`, several files to a process. A new file lands here by default;
 *   `test/tiers.test.ts` fails if it does any of the above.
 */

export const ALL_TESTS = ['test/**/*.test.ts'];

/** Checked before the integration list, so a slow file may sit in a folder integration names whole. */
export const SLOW_TESTS = [
  // Three real gateways and a Redis each, 20-40 s a file on 2 cores.
  'test/cluster/cluster-caps.test.ts',
  'test/cluster/cluster-commands.test.ts',
  'test/cluster/cluster-faults.test.ts',
  'test/cluster/cluster-redis-away.test.ts',
  'test/cluster/cluster-keep.test.ts',
  'test/cluster/cluster-memory-short.test.ts',
  'test/cluster/cluster-random.test.ts',
  'test/cluster/cluster-shared-cap.test.ts',
  'test/agents-real/**/*.test.ts',
  'test/daemon/daemon-mcp-fuzz.test.ts',
  // Every route × 16 hostile segments × 4 token kinds (~3,000 requests) and 68 oversized chunked bodies.
  'test/http/route-fuzz-daemon.test.ts',
  'test/dashboard/dashboard-browser.test.ts',
  'test/dashboard/dashboard-browser-pages.test.ts',
  'test/dashboard/dashboard-browser-triage.test.ts',
  // Redis, two real gateways and chromium: the cluster panel watched while runs rise and fall.
  'test/dashboard/dashboard-cluster-browser.test.ts',
  'test/transcripts/paging-memory.test.ts',
  // npm pack (a tsc build when dist/ is stale), an install, and crew demo (~40 s) from the installed bin.
  'test/package/packed-tarball.test.ts',
  // The official MCP conformance suite on a Node 22 it installs (about a minute the first time), one
  // suite process per spec version against a real crew serve.
  'test/mcp/conformance/conformance.test.ts',
  // The alpha suite's MCP 2026-07-28 scenarios, the same way (its own cache directory and Node).
  'test/mcp/conformance/conformance-modern.test.ts',
];

export const INTEGRATION_TESTS = [
  'test/agents/agents-check.test.ts',
  'test/agents/builtin-agents.test.ts',
  'test/chat/chat-fanout.test.ts',
  'test/chat/chat-http.test.ts',
  'test/chat/chat-load-session.test.ts',
  'test/chat/chat-ordering.test.ts',
  'test/chat/chat-restart.test.ts',
  'test/chat/chat-runtime-death.test.ts',
  'test/chat/chat-sharing.test.ts',
  'test/chat/crew-chat-cli.test.ts',
  'test/chat/hosted-runtime.test.ts',
  'test/cli/cli-e2e.test.ts',
  'test/cli/parent-names-cli.test.ts',
  'test/cli/demo-e2e.test.ts',
  'test/cluster/cluster-link-redis.test.ts',
  'test/cluster/redis-cluster.test.ts',
  'test/cluster/redis-harness.test.ts',
  'test/cluster/shared-cap.test.ts',
  'test/cluster/slot-turns.test.ts',
  'test/daemon/**/*.test.ts',
  'test/dashboard/dashboard-ws.test.ts',
  'test/fake-provider/fake-provider-cli.test.ts',
  'test/first-hour/prepare-build.test.ts',
  'test/fake-provider/fake-provider.test.ts',
  'test/metrics/metrics-daemon.test.ts',
  'test/gateway/crash.test.ts',
  'test/workspace/worktree-wave.test.ts',
  'test/workspace/worktree-cleanup.test.ts',
  'test/workspace/sandbox.test.ts',
  'test/workspace/merge-refusals.test.ts',
  'test/workspace/worktree-git-cost.test.ts',
  'test/hooks/claude-hook-process.test.ts',
  // Connects to a closed loopback port (the bridge's daemon probe).
  'test/mcp/daemon-start.test.ts',
  'test/http/body-limit-daemon.test.ts',
  'test/host/probe-darwin.test.ts',
  'test/host/sampler-live.test.ts',
  'test/runners/acp-dedicated.test.ts',
  'test/runners/acp-keep.test.ts',
  'test/runners/acp-options.test.ts',
  'test/runners/acp-protocol-line.test.ts',
  'test/runners/acp-runner.test.ts',
  'test/runners/acp-shared.test.ts',
  'test/runners/acp-steer.test.ts',
  'test/runners/command-runner.test.ts',
  'test/runners/conformance-others.test.ts',
  'test/runners/oom-kernel.test.ts',
  'test/runners/oom-score.test.ts',
  'test/runners/process-group.test.ts',
  'test/runners/process-group-shared-read.test.ts',
  'test/runners/run-containment.test.ts',
  'test/runners/memory-pause.test.ts',
  'test/runners/acp-memory-pause.test.ts',
  'test/runners/spawner-cgroup.test.ts',
  'test/runners/spawner.test.ts',
  'test/runners/spawner-native.test.ts',
  'test/sim/once.test.ts',
  'test/sim/sim-agent.test.ts',
  'test/sim/sim-load-session.test.ts',
  'test/sim/sim-parent.test.ts',
  'test/slack/slack-daemon.test.ts',
  'test/slack/slack-first-hour.test.ts',
  'test/slack/slack-long-results.test.ts',
  'test/slack/slack-restart.test.ts',
  'test/slack/slack-socket-mode.test.ts',
  'test/store/sqlite-store.test.ts',
  'test/tracing/traces-daemon.test.ts',
  'test/transcripts/transcript-preview.test.ts',
  'test/transcripts/transcript-writer.test.ts',
  'test/transcripts/transcript-disk-full.test.ts',
  'test/bundle/bundled-children.test.ts',
  'test/provider/provider-proxy.test.ts',
  'test/provider/provider-gateway-daemon.test.ts',
  'test/provider/provider-usage-daemon.test.ts',
];

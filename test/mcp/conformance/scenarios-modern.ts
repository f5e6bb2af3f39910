/**
 * Which scenarios of the alpha conformance suite (the first to cover MCP 2026-07-28 and the tasks
 * extension) apply to Crew's stateless endpoint, and why each other one does not. `conformance-modern.test.ts`
 * runs the applicable ones against a real `crew serve` and fails on any 2026-07-28 or extension scenario
 * of the pinned suite that is in neither table. The session-based versions stay on 0.1.16 (scenarios.ts).
 */

export const ALPHA_VERSION = '0.2.0-alpha.12';
export const MODERN_SPEC = '2026-07-28';

export interface ModernApplicable {
  scenario: string;
  covers: string;
  /**
   * Checks of the scenario that exercise a fixture of the suite's own test server, not the protocol:
   * id → why. Every other check must pass.
   */
  notApplicableChecks?: ReadonlyMap<string, string>;
}

const NO_RESOURCES_OR_PROMPTS =
  'Crew offers no prompts or resources, so there is no list to carry caching hints';

export const MODERN_APPLICABLE: readonly ModernApplicable[] = [
  {
    scenario: 'server-stateless',
    covers:
      'per-request _meta checks (-32602), server/discover, version and header errors (-32022, -32020), removed methods (404, -32601)',
    notApplicableChecks: new Map([
      [
        'sep-2575-server-rejects-undeclared-capability',
        "calls the suite's own tool test_missing_capability; no Crew tool needs a client capability",
      ],
      [
        'sep-2575-missing-capability-http-400',
        'the HTTP status of the -32021 above; Crew answers -32021 with 400 for tasks/* without the extension (test/daemon/mcp-modern-tasks.test.ts)',
      ],
    ]),
  },
  { scenario: 'tools-list', covers: 'tools/list, stateless: every tool valid against the 2026-07-28 schema' },
  { scenario: 'tools-call-error', covers: 'a failing call is an isError result, not a protocol error' },
  { scenario: 'server-sse-multiple-streams', covers: 'several requests at once, each answered on its own' },
  { scenario: 'dns-rebinding-protection', covers: 'a foreign Host/Origin is refused, a loopback one served' },
  {
    scenario: 'caching',
    covers: 'tools/list carries ttlMs and cacheScope',
    notApplicableChecks: new Map([
      ['sep-2549-prompts-list-caching-hints', NO_RESOURCES_OR_PROMPTS],
      ['sep-2549-resources-list-caching-hints', NO_RESOURCES_OR_PROMPTS],
      ['sep-2549-resources-templates-list-caching-hints', NO_RESOURCES_OR_PROMPTS],
    ]),
  },
  {
    scenario: 'http-header-validation',
    covers: 'MCP-Protocol-Version, Mcp-Method, Mcp-Name checked against the body (400, -32020)',
  },
];

const EVERYTHING = (what: string) =>
  `calls the suite's own test server fixtures (${what}); Crew's tools are the fixed spawn tools`;
const TASK_FIXTURES =
  "needs the suite's task fixtures (greet, slow_compute, failing_job, confirm_delete); Crew's task is spawn_sub_agents' wave, tested in test/daemon/mcp-modern-tasks.test.ts";
const MRTR =
  'Crew never asks the client for input (no elicitation, sampling or roots), so no InputRequiredResult';

export const MODERN_NOT_APPLICABLE: ReadonlyMap<string, string> = new Map([
  ['completion-complete', 'Crew declares no completions capability'],
  ['tools-call-simple-text', EVERYTHING('test_simple_text')],
  ['tools-call-image', EVERYTHING('test_image_content')],
  ['tools-call-audio', EVERYTHING('test_audio_content')],
  ['tools-call-embedded-resource', EVERYTHING('test_embedded_resource')],
  ['tools-call-mixed-content', EVERYTHING('test_multiple_content_types')],
  ['tools-call-with-progress', EVERYTHING('test_tool_with_progress')],
  ['json-schema-2020-12', EVERYTHING('json_schema_2020_12_tool')],
  ['resources-list', 'Crew offers no resources'],
  ['resources-read-text', 'Crew offers no resources'],
  ['resources-read-binary', 'Crew offers no resources'],
  ['resources-templates-read', 'Crew offers no resources'],
  ['sep-2164-resource-not-found', 'Crew offers no resources'],
  ['sep-2640-skills-directory', 'the skills extension; Crew offers no skills'],
  ['sep-2640-skills-enumeration', 'the skills extension; Crew offers no skills'],
  ['sep-2640-skills-manifest', 'the skills extension; Crew offers no skills'],
  ['prompts-list', 'Crew offers no prompts'],
  ['prompts-get-simple', 'Crew offers no prompts'],
  ['prompts-get-with-args', 'Crew offers no prompts'],
  ['prompts-get-embedded-resource', 'Crew offers no prompts'],
  ['prompts-get-with-image', 'Crew offers no prompts'],
  [
    'http-custom-header-server-validation',
    'needs a tool with an x-mcp-header parameter; no Crew tool mirrors a parameter into a header',
  ],
  ['tasks-lifecycle', TASK_FIXTURES],
  ['tasks-capability-negotiation', TASK_FIXTURES],
  ['tasks-wire-fields', TASK_FIXTURES],
  ['tasks-request-state-removal', TASK_FIXTURES],
  ['tasks-mrtr-input', `${TASK_FIXTURES}; ${MRTR}`],
  ['tasks-request-headers', TASK_FIXTURES],
  ['tasks-dispatch-and-envelope', TASK_FIXTURES],
  [
    'tasks-status-notifications',
    'Crew sends no notifications/tasks (no subscriptions/listen); clients poll tasks/get',
  ],
  ['tasks-required-task-error', TASK_FIXTURES],
  ['tasks-mrtr-composition', `${TASK_FIXTURES}; ${MRTR}`],
  ['input-required-result-basic-elicitation', MRTR],
  ['input-required-result-basic-sampling', MRTR],
  ['input-required-result-basic-list-roots', MRTR],
  ['input-required-result-request-state', MRTR],
  ['input-required-result-multiple-input-requests', MRTR],
  ['input-required-result-multi-round', MRTR],
  ['input-required-result-missing-input-response', MRTR],
  ['input-required-result-non-tool-request', MRTR],
  ['input-required-result-result-type', MRTR],
  ['input-required-result-unsupported-methods', MRTR],
  ['input-required-result-tampered-state', MRTR],
  ['input-required-result-capability-check', MRTR],
  ['input-required-result-ignore-extra-params', MRTR],
  ['input-required-result-validate-input', MRTR],
]);

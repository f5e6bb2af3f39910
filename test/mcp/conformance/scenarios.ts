/**
 * Which server scenarios of the official MCP conformance suite (`@modelcontextprotocol/conformance`) apply
 * to Crew, on which spec versions, and why each other one does not. `conformance.test.ts` runs every
 * applicable one against a real `crew serve` and fails on any scenario the pinned suite lists that is in
 * neither table, so a new suite version cannot add a scenario that goes unclassified.
 *
 * Most scenarios the suite skips here call a tool, resource or prompt of its own test server (the
 * "everything server": `test_simple_text`, `test_reconnection`, `json_schema_2020_12_tool`, ...) or a
 * capability Crew does not declare (resources, prompts, completions, sampling, elicitation). Crew's tool set
 * is fixed (the spawn tools), so those are not applicable rather than failing.
 */

/** The pinned suite release (covers 2025-03-26, 2025-06-18 and 2025-11-25) and the Node it needs (>= 22). */
export const CONFORMANCE_VERSION = '0.1.16';
export const NODE_VERSION = '22.23.5';

export const SPEC_VERSIONS = ['2025-06-18', '2025-11-25'] as const;
export type SpecVersion = (typeof SPEC_VERSIONS)[number];

export interface Applicable {
  scenario: string;
  versions: readonly SpecVersion[];
  /** What it shows about Crew. */
  covers: string;
}

export const APPLICABLE: readonly Applicable[] = [
  {
    scenario: 'server-initialize',
    versions: SPEC_VERSIONS,
    covers: 'initialize answers version, capabilities, serverInfo',
  },
  {
    scenario: 'logging-set-level',
    versions: SPEC_VERSIONS,
    covers: 'logging/setLevel (Crew declares logging)',
  },
  { scenario: 'ping', versions: SPEC_VERSIONS, covers: 'ping answers an empty result' },
  {
    scenario: 'tools-list',
    versions: SPEC_VERSIONS,
    covers: 'tools/list: every tool has a name, description, object schema',
  },
  {
    scenario: 'tools-call-error',
    versions: SPEC_VERSIONS,
    covers: 'a tool call that fails is a result with isError and a message, not a protocol error',
  },
  {
    scenario: 'server-sse-multiple-streams',
    versions: ['2025-11-25'],
    covers: 'several POST SSE streams at once in one session',
  },
  {
    scenario: 'dns-rebinding-protection',
    versions: ['2025-11-25'],
    covers: 'a foreign Host/Origin is refused, a loopback one served',
  },
];

const EVERYTHING_TOOL = (tool: string) =>
  `calls the suite's own test tool \`${tool}\`; Crew's tools are the fixed spawn tools, so the call gets Crew's unknown-tool refusal`;

export const NOT_APPLICABLE: ReadonlyMap<string, string> = new Map([
  [
    'completion-complete',
    'Crew declares no `completions` capability (no prompts or resource templates to complete); the method-not-found answer is the correct one',
  ],
  [
    'tools-call-simple-text',
    `${EVERYTHING_TOOL('test_simple_text')}; it would pass only because the refusal is text, which shows nothing`,
  ],
  ['tools-call-image', EVERYTHING_TOOL('test_image_content')],
  ['tools-call-audio', EVERYTHING_TOOL('test_audio_content')],
  ['tools-call-embedded-resource', EVERYTHING_TOOL('test_embedded_resource')],
  ['tools-call-mixed-content', EVERYTHING_TOOL('test_multiple_content_types')],
  [
    'tools-call-with-logging',
    `${EVERYTHING_TOOL('test_tool_with_logging')}; Crew's log notifications are completion hints, sent when a run ends`,
  ],
  ['tools-call-with-progress', EVERYTHING_TOOL('test_tool_with_progress')],
  ['tools-call-sampling', 'Crew never asks the client to sample (no sampling/createMessage)'],
  ['tools-call-elicitation', 'Crew never asks the client for input (no elicitation/create)'],
  ['elicitation-sep1034-defaults', 'Crew never asks the client for input (no elicitation/create)'],
  ['elicitation-sep1330-enums', 'Crew never asks the client for input (no elicitation/create)'],
  [
    'json-schema-2020-12',
    `${EVERYTHING_TOOL('json_schema_2020_12_tool')} and checks that tool's own $defs/allOf schema`,
  ],
  [
    'server-sse-polling',
    `${EVERYTHING_TOOL('test_reconnection')}, a tool that closes its POST stream mid-call; Crew's stream resumption is tested with raw HTTP (test/daemon)`,
  ],
  ['resources-list', 'Crew offers no resources (no `resources` capability)'],
  ['resources-read-text', 'Crew offers no resources (no `resources` capability)'],
  ['resources-read-binary', 'Crew offers no resources (no `resources` capability)'],
  ['resources-templates-read', 'Crew offers no resources (no `resources` capability)'],
  ['resources-subscribe', 'Crew offers no resources (no `resources` capability)'],
  ['resources-unsubscribe', 'Crew offers no resources (no `resources` capability)'],
  ['prompts-list', 'Crew offers no prompts (no `prompts` capability)'],
  ['prompts-get-simple', 'Crew offers no prompts (no `prompts` capability)'],
  ['prompts-get-with-args', 'Crew offers no prompts (no `prompts` capability)'],
  ['prompts-get-embedded-resource', 'Crew offers no prompts (no `prompts` capability)'],
  ['prompts-get-with-image', 'Crew offers no prompts (no `prompts` capability)'],
]);

import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { inputJsonSchema, resultJsonSchema } from './tool-schemas.js';
import { TOOLS } from './tools.js';

let listed: Tool[] | undefined;

/**
 * The `tools/list` answer: every tool with its JSON input schema (from the zod schema Crew validates
 * with) and the one result schema. The daemon and the stdio bridge answer from this same function, so
 * a parent sees the same tools whichever way it connects. Built once per process.
 */
export function toolList(): Tool[] {
  listed ??= TOOLS.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: inputJsonSchema(tool.schema) as Tool['inputSchema'],
    outputSchema: resultJsonSchema as unknown as Tool['outputSchema'],
    annotations: {
      title: tool.title,
      readOnlyHint: tool.readOnly,
      destructiveHint: tool.name === 'spawn_cancel',
      idempotentHint: tool.readOnly,
      openWorldHint: false,
    },
  }));
  return listed;
}

import type { RunSpec } from '../core/types.js';

/**
 * The context scope a run was given (`include_memory`, `include_lessons`, `include_project`), to carry
 * into the next turn of its conversation: a continuation is the same conversation, so what its first
 * run left out (memory files, lessons, the project's notes) stays out (issue 29).
 */
export function contextScopeOf(
  spec: RunSpec | undefined,
): Pick<RunSpec, 'includeMemory' | 'includeLessons' | 'includeProject'> {
  if (!spec) return {};
  return {
    ...(spec.includeMemory !== undefined ? { includeMemory: spec.includeMemory } : {}),
    ...(spec.includeLessons !== undefined ? { includeLessons: spec.includeLessons } : {}),
    ...(spec.includeProject !== undefined ? { includeProject: spec.includeProject } : {}),
  };
}

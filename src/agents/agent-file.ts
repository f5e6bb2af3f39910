import { basename } from 'node:path';
import type { z } from 'zod';
import { type AgentDef, agentDefSchema } from '../core/agent-def.js';
import { parseFrontMatter } from './front-matter.js';
import type { AgentProblem } from './loaded-agent.js';
import { skillNameProblem } from './skills.js';

/**
 * One agent file (`agents/*.md`, DESIGN §6 Files): front matter with the agent's fields, body = system
 * prompt. The name defaults to the file name without `.md`. Unknown keys are errors, as in config: a
 * misspelt `max_turn:` silently ignored would be worse than a file that does not load.
 */

export type AgentFileResult = { ok: true; agent: AgentDef } | { ok: false; problems: AgentProblem[] };

/** The keys a front matter may hold (`prompt` is the body, not a key). */
const FILE_KEYS = Object.keys(agentDefSchema.shape).filter((key) => key !== 'prompt');

/** Parses one agent file's text; every problem carries `path` and the line at fault (1 when none is). */
export function parseAgentFile(path: string, text: string): AgentFileResult {
  const parsed = parseFrontMatter(text);
  if (!parsed.ok) return { ok: false, problems: [{ path, line: parsed.line, message: parsed.message }] };
  const { data, lines, body } = parsed.value;
  const problem = (key: string | undefined, message: string): AgentProblem => ({
    path,
    line: (key === undefined ? undefined : lines.get(key)) ?? 1,
    message,
  });

  const unknown = Object.keys(data).filter((key) => !FILE_KEYS.includes(key));
  if (unknown.length > 0) {
    return {
      ok: false,
      problems: unknown.map((key) =>
        problem(
          key,
          key === 'prompt'
            ? 'unknown key "prompt": the system prompt is the body of the file, after the closing ---'
            : `unknown key "${key}" (known: ${FILE_KEYS.join(', ')})`,
        ),
      ),
    };
  }

  const nameFromFile = !Object.hasOwn(data, 'name');
  const name = nameFromFile ? basename(path, '.md') : data.name;
  const prompt = body.trim();
  const result = agentDefSchema.safeParse({ ...data, name, ...(prompt === '' ? {} : { prompt }) });
  if (!result.success) {
    return {
      ok: false,
      problems: result.error.issues.map((issue) => {
        const key = issue.path.map(String).join('.');
        if (key === 'name' && nameFromFile) {
          return problem(
            undefined,
            `the file name ${JSON.stringify(name)} is not an agent name (letters, digits, . _ -); set "name:"`,
          );
        }
        return problem(lines.has(key) ? key : String(issue.path[0] ?? ''), describeIssue(issue, data));
      }),
    };
  }

  const skills = result.data.skills;
  const unsafe = skills.flatMap((skill, i) => {
    const message = skillNameProblem(skill);
    return message === undefined
      ? []
      : [problem(lines.has(`skills.${i}`) ? `skills.${i}` : 'skills', message)];
  });
  if (unsafe.length > 0) return { ok: false, problems: unsafe };
  return { ok: true, agent: { ...result.data, name: result.data.name ?? basename(path, '.md') } };
}

/** "key: expected …, got …" for one schema issue. */
function describeIssue(issue: z.core.$ZodIssue, data: Record<string, unknown>): string {
  const key = issue.path.map(String).join('.');
  const top = String(issue.path[0] ?? '');
  if (top !== '' && !Object.hasOwn(data, top)) return `missing "${top}"`;
  const got = JSON.stringify(pick(data, issue.path));
  if (issue.code === 'invalid_union' && key === 'command') {
    return `command: expected a string or a list of strings, got ${got}`;
  }
  const expected = issue.message.replace(/^Invalid input: /, '').replace(/, received \w+$/, '');
  return `${key}: ${expected}, got ${got}`;
}

function pick(data: Record<string, unknown>, path: readonly PropertyKey[]): unknown {
  let current: unknown = data;
  for (const part of path) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, part)) return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

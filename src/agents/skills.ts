import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitFrontMatter } from './front-matter.js';

/**
 * Skills (DESIGN §6, Files): `$CREW_HOME/skills/<name>.md` or `$CREW_HOME/skills/<name>/SKILL.md`,
 * appended to the system prompt of the agents that list them.
 */

const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Why a skill name is unsafe to join onto the skills directory, or undefined when it is a plain name.
 * `/`, `\` and `..` would let an agent definition read files outside `$CREW_HOME/skills`.
 */
export function skillNameProblem(name: string): string | undefined {
  if (SKILL_NAME.test(name) && !name.includes('..')) return undefined;
  return `skill name ${JSON.stringify(name)} must be a plain name (letters, digits, . _ -), not a path`;
}

export type SkillRead =
  | { ok: true; name: string; path: string; text: string }
  | { ok: false; message: string };

/**
 * Reads a skill, trying `<name>.md` then `<name>/SKILL.md`. The name must have passed
 * {@link skillNameProblem}. A skill file's own front matter (name, description) is dropped: the agent
 * needs its instructions, not its catalogue entry.
 */
export function readSkill(crewHome: string, name: string): SkillRead {
  const dir = join(crewHome, 'skills');
  const candidates = [join(dir, `${name}.md`), join(dir, name, 'SKILL.md')];
  for (const path of candidates) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const split = splitFrontMatter(text);
    return { ok: true, name, path, text: (split?.ok ? split.body : text).trim() };
  }
  return { ok: false, message: `skill "${name}" not found (looked for ${candidates.join(' and ')})` };
}

/** The system prompt with each skill appended under its own heading. */
export function appendSkills(
  prompt: string | undefined,
  skills: readonly { name: string; text: string }[],
): string {
  const parts = prompt === undefined || prompt === '' ? [] : [prompt];
  for (const skill of skills) parts.push(`## Skill: ${skill.name}\n\n${skill.text}`);
  return parts.join('\n\n');
}

import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * `npx crew` in the repository installs the project itself into npx's cache, which runs its `prepare`
 * script: before this, a full `tsc` build (~22 s, its output hidden by npm). `prepare` now builds only
 * when an input is newer than the last build, and says so on stderr when it does.
 */
describe('the prepare script (what the first `npx crew` runs)', () => {
  let project: string;
  const builds = () => readFileSync(join(project, 'builds.log'), 'utf8').length;
  const prepare = () =>
    spawnSync('npm', ['run', '--silent', 'prepare'], { cwd: project, encoding: 'utf8', timeout: 60_000 });

  beforeEach(() => {
    project = mkdtempSync(join(tmpdir(), 'crew-prepare-'));
    mkdirSync(join(project, 'scripts'));
    mkdirSync(join(project, 'src', 'cli'), { recursive: true });
    copyFileSync(join(ROOT, 'scripts', 'prepare.mjs'), join(project, 'scripts', 'prepare.mjs'));
    writeFileSync(join(project, 'src', 'cli', 'main.ts'), 'export {};\n');
    writeFileSync(join(project, 'tsconfig.json'), '{}\n');
    writeFileSync(join(project, 'builds.log'), '');
    const real = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: { prepare: string };
    };
    // The real prepare command; a build that only records that it ran and makes dist/ as tsc would.
    const build = `node -e "require('fs').appendFileSync('builds.log','x');require('fs').mkdirSync('dist',{recursive:true})" && node scripts/prepare.mjs --stamp`;
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'crew', version: '0.0.0', scripts: { prepare: real.scripts.prepare, build } }),
    );
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('builds when dist/ is missing, saying so on stderr; not again while nothing changed; again after a change', () => {
    const first = prepare();
    expect(first.status, first.stderr).toBe(0);
    expect(builds()).toBe(1);
    expect(first.stderr).toMatch(/crew: building dist\/ from src\//);

    const second = prepare();
    expect(second.status, second.stderr).toBe(0);
    expect(builds()).toBe(1);
    expect(second.stderr).toBe('');

    const later = new Date(Date.now() + 5_000);
    utimesSync(join(project, 'src', 'cli', 'main.ts'), later, later);
    const third = prepare();
    expect(third.status, third.stderr).toBe(0);
    expect(builds()).toBe(2);
    expect(third.stderr).toMatch(/src\/cli\/main\.ts changed/);
    // Three npm starts: ~7 s on a quiet machine, over 30 s while the suite loads two cores.
  }, 180_000);
});

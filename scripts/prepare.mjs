// `npm run prepare`, which npm runs on `npm install` in the repository and, hidden, when `npx crew` installs
// this project into its cache: build dist/ only when an input is newer than the last build. Without this
// the first `npx crew` spent ~22 s in a silent `tsc`. `--stamp` (the last step of `npm run build`) records
// a finished build.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const stamp = join(root, 'dist', '.build-stamp');
const INPUTS = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts'];

// An installed package (a tarball or folder install runs prepare too) has dist/ and no src/: nothing to build.
if (!existsSync(join(root, 'src'))) process.exit(0);

if (process.argv.includes('--stamp')) {
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  process.exit(0);
}

/** The first input newer than the stamp (a path to name), or undefined when the build is current. */
function changedSince(builtAtMs) {
  const stack = INPUTS.map((p) => join(root, p)).filter((p) => existsSync(p));
  while (stack.length > 0) {
    const path = stack.pop();
    const info = statSync(path);
    if (info.isDirectory()) {
      for (const name of readdirSync(path)) stack.push(join(path, name));
    } else if (info.mtimeMs > builtAtMs) {
      return relative(root, path);
    }
  }
  return undefined;
}

const builtAtMs = existsSync(stamp) ? statSync(stamp).mtimeMs : undefined;
const changed = builtAtMs === undefined ? undefined : changedSince(builtAtMs);
if (builtAtMs !== undefined && changed === undefined) process.exit(0);
process.stderr.write(
  `crew: building dist/ from src/ (${changed === undefined ? 'no build yet' : `${changed} changed`}; tsc takes ~20 s)\n`,
);
const npm = process.env.npm_execpath;
const build = npm
  ? spawnSync(process.execPath, [npm, 'run', '--silent', 'build'], { cwd: root, stdio: 'inherit' })
  : spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(build.status ?? 1);

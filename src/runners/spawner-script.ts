/**
 * The program the spawner process runs (see spawner.ts), as text handed to `node -e`, so it needs no file
 * of its own beside the bundle and runs the same from `src/` and from `dist/`. Plain JavaScript with only
 * Node built-ins: it must stay small, because its size is what each fork copies.
 *
 * Messages in (IPC, advanced serialization):
 * - `{t: 'env', key, env}`: remember an environment under `key` (sent once per agent config).
 * - `{t: 'spawn', id, file, args, check, cwd, envKey, oomScoreAdj, join?, home?, wrapper?}`: start `file
 *   args` detached (its own session and process group), stdin /dev/null, stdout and stderr piped back;
 *   `check` is the command to look up on PATH first (a wrapper such as the cgroup's `sh` would otherwise
 *   hide a missing one). With `join` (a cgroup's `cgroup.procs`), the helper writes its own pid there,
 *   forks, and writes it into `home` again: the child is born in the run's cgroup, with no shell between.
 *   Where it cannot join, it starts `wrapper` + `file args` instead (the shell that joins by itself);
 *   where it cannot go back, it says `stuck` and ends (in a run's cell, that run's stop would kill it).
 * - `{t: 'forget', key}`: drop an environment.
 * - `{t: 'drop', id}`: close what is left of run `id`'s pipes (a process outside its group may hold them).
 * Messages out: `{t: 'started', id, pid, startTime}`, `{t: 'failed', id, error}`, `{t: 'out', id, fd,
 * data}`, `{t: 'eof', id, fd}`, `{t: 'exit', id, code, signal}`, `{t: 'stuck'}`.
 *
 * It ends when its channel to the daemon closes; the runs it started are not its to end (their cells
 * are the daemon's), so it leaves them be.
 */
export const SPAWNER_SCRIPT = `
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const envs = new Map();
const children = new Map();
const send = (message) => { if (process.connected) process.send(message); };
function isExecutable(command, cwd, PATH) {
  const candidates = command.includes('/')
    ? [path.isAbsolute(command) ? command : path.resolve(cwd, command)]
    : (PATH ?? '/usr/bin:/bin').split(path.delimiter).map((dir) => path.resolve(cwd, dir === '' ? '.' : dir, command));
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return true;
    } catch {}
  }
  return false;
}
function describeFailure(file, cwd) {
  let isDir = false;
  try { isDir = fs.statSync(cwd).isDirectory(); } catch {}
  if (!isDir) return 'cannot start "' + file + '": the working directory ' + cwd + ' does not exist';
  return 'cannot start "' + file + '": not found on PATH or not executable';
}
function startTimeOf(pid) {
  try {
    const line = fs.readFileSync('/proc/' + pid + '/stat', 'latin1');
    const value = Number(line.slice(line.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isSafeInteger(value) ? value : undefined;
  } catch { return undefined; }
}
function raiseOomScoreAdj(pid, adj) {
  const file = '/proc/' + pid + '/oom_score_adj';
  try {
    const current = Number(fs.readFileSync(file, 'utf8').trim());
    if (adj > current) fs.writeFileSync(file, String(Math.min(1000, Math.round(adj))));
  } catch {}
}
let stuck = false;
function moveSelf(procs) {
  try { fs.writeFileSync(procs, String(process.pid)); return true; } catch { return false; }
}
function start(m) {
  const env = envs.get(m.envKey);
  if (env === undefined) return send({ t: 'failed', id: m.id, error: 'the spawner holds no environment ' + m.envKey });
  let file = m.file;
  let args = m.args;
  let check = m.check;
  const joined = m.join !== undefined && moveSelf(m.join);
  if (m.join !== undefined && !joined) {
    file = m.wrapper[0];
    args = [...m.wrapper.slice(1), m.file, ...m.args];
    check = m.file;
  }
  if (check !== undefined && !isExecutable(check, m.cwd, env.PATH)) {
    if (joined) leave(m.home);
    return send({ t: 'failed', id: m.id, error: describeFailure(check, m.cwd) });
  }
  let child;
  try {
    child = spawn(file, args, { cwd: m.cwd, env, detached: true, shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    child = undefined;
  } finally {
    if (joined) leave(m.home);
  }
  if (child === undefined) return send({ t: 'failed', id: m.id, error: describeFailure(check ?? file, m.cwd) });
  child.on('error', () => {});
  const pid = child.pid;
  if (pid === undefined) return send({ t: 'failed', id: m.id, error: describeFailure(check ?? file, m.cwd) });
  // Read before yielding: even a process that already exited is an unreaped zombie here.
  const startTime = startTimeOf(pid);
  if (m.oomScoreAdj) raiseOomScoreAdj(pid, m.oomScoreAdj);
  send({ t: 'started', id: m.id, pid, startTime });
  children.set(m.id, child);
  let open = 3;
  const settle = () => { if (--open === 0) children.delete(m.id); };
  for (const [fd, stream] of [[1, child.stdout], [2, child.stderr]]) {
    stream.on('data', (data) => send({ t: 'out', id: m.id, fd, data }));
    stream.on('error', () => {});
    stream.once('close', () => { send({ t: 'eof', id: m.id, fd }); settle(); });
  }
  child.once('exit', (code, signal) => { send({ t: 'exit', id: m.id, code, signal }); settle(); });
}
// Back to the helper's own cgroup after forking in a run's. Failing that it must not stay: it ends (its
// runs then end failed and their cells are emptied by the daemon), having said so, so the next helper
// uses the shell wrapper.
function leave(home) {
  if (!moveSelf(home)) stuck = true;
}
process.on('message', (m) => {
  if (stuck) return;
  if (m.t === 'env') envs.set(m.key, m.env);
  else if (m.t === 'forget') envs.delete(m.key);
  else if (m.t === 'spawn') {
    start(m);
    // After this run's answer, in order: the daemon learns first, then the channel ends.
    if (stuck && process.connected) process.send({ t: 'stuck' }, () => process.exit(70));
  }
  else if (m.t === 'drop') {
    const child = children.get(m.id);
    child?.stdout.destroy();
    child?.stderr.destroy();
  }
});
process.on('disconnect', () => process.exit(0));
`;

// SPDX-License-Identifier: LGPL-2.1-or-later
// One confined command: `dshbox run --report /dev/fd/3 [POLICY OPTIONS] -- ARGV`.
//
// The report goes to descriptor 3 (`--report -` would share stdout with the command).  That is an
// unlinked file: Node's 'pipe' is a socket, which /dev/fd/3 cannot reopen (ENXIO), while a
// regular file reopens through /dev/fd even with no name left, and is a report dshbox can write
// again, so the start decides the backend with no probe first (docs/run.md).  So the file has no
// name anywhere the command could reach, and dshbox closes every descriptor above 2 before the
// command's exec.  How a failure is classified is read from that report, never guessed: `denied`
// when the command failed and its stderr carries one of the report's denial signatures or dshbox's
// note that the runtime broker refused calls; `sandbox-error` when the status and stderr prefix
// are the report's `runner_failure`.
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmdirSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary } from './binary.js';
import { policyArgs } from './policy.js';

// What docs/run.md documents for dshbox's own failure, used when there is no report (the policy
// did not load, so dshbox stopped before writing it).
const RUNNER_FAILURE = { exit_code: 125, stderr_prefix: 'dshbox: error: ' };
const BROKER_REFUSED = /^dshbox: note: .*the runtime broker refused \d+ of its calls/m;

/** The argv of `dshbox run` for `argv` (without the program). */
export function runArgs(argv, opts = {}) {
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string'))
    throw new TypeError('run: argv must be a non-empty array of strings');
  // SPEC 12.4: onAsk answers on descriptor 4, a socket of the child's stdio.
  const ask = opts.onAsk ? ['--ask-fd', '4'] : [];
  return ['run', ...policyArgs(opts), '--report', '/dev/fd/3', ...ask, '--', ...argv];
}

/**
 * @param {{ exitCode: number|null, signal: string|null, stderr: string, report: object|null }} r
 * @returns {'ok'|'failed'|'denied'|'sandbox-error'}
 */
export function classify({ exitCode, signal, stderr, report }) {
  if (exitCode === 0) return 'ok';
  const rf = report?.runner_failure ?? RUNNER_FAILURE;
  if (signal === null && exitCode === rf.exit_code &&
      stderr.split('\n').some((l) => l.startsWith(rf.stderr_prefix)))
    return 'sandbox-error';
  const text = stderr.toLowerCase();
  const signatures = report?.denial_signatures ?? [];
  if (signatures.some((s) => s && text.includes(s.toLowerCase())) || BROKER_REFUSED.test(stderr))
    return 'denied';
  return 'failed';
}

function anonymousFile() {
  const dir = mkdtempSync(join(tmpdir(), 'dshbox-report-'));
  const file = join(dir, 'report.json');
  try {
    const fd = openSync(file, 'w+', 0o600);
    unlinkSync(file);
    return fd;
  } finally {
    try { unlinkSync(file); } catch { /* already gone */ }
    rmdirSync(dir);
  }
}

function takeReport(fd) {
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return null;
    const buf = Buffer.alloc(size);
    readSync(fd, buf, 0, size, 0);
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

const DECISIONS = ['allow-once', 'allow-run', 'deny'];

// Each question line (schema/ask.schema.json) goes to onAsk; its answer, or 'deny' when it throws
// or says something else, goes back with the question's id.  dshbox denies on its own after
// askTimeoutMs.
function answerQuestions(sock, onAsk) {
  let buf = '';
  sock.on('error', () => {});
  sock.on('data', (chunk) => {
    buf += chunk.toString('utf8');
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let q;
      try { q = JSON.parse(line); } catch { continue; }
      Promise.resolve()
        .then(() => onAsk({ name: q.name, port: q.port, via: q.via }))
        .catch(() => 'deny')
        .then((d) => {
          if (!sock.destroyed)
            sock.write(JSON.stringify({ id: q.id, decision: DECISIONS.includes(d) ? d : 'deny' }) + '\n');
        });
    }
  });
}

export function run(argv, opts = {}) {
  const binary = findBinary({ binary: opts.binary, env: opts.env });
  const args = runArgs(argv, opts);
  const killAfterMs = opts.killAfterMs ?? 2000;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) {
      resolve({ outcome: 'aborted', exitCode: null, signal: null, stdout: '', stderr: '', report: null });
      return;
    }
    const input = opts.input;
    const reportFd = anonymousFile();
    let child;
    try {
      child = spawn(binary, args, {
        cwd: opts.cwd,
        env: opts.env,
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', reportFd, ...(opts.onAsk ? ['pipe'] : [])],
      });
    } catch (e) {
      closeSync(reportFd);
      throw e;
    }
    const out = [], err = [];
    let stopped = null, timer = null, killTimer = null, closeTimer = null, done = false;

    const stop = (why) => {
      if (stopped || done) return;
      stopped = why;
      // dshbox passes SIGTERM on to the command; when the command ends, the sandbox's init kills
      // what is left.  SIGKILL to dshbox kills init too (its parent-death signal), and the pid
      // namespace with everything in it.
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    };
    const onAbort = () => stop('aborted');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.timeoutMs !== undefined && opts.timeoutMs !== null)
      timer = setTimeout(() => stop('timeout'), opts.timeoutMs);

    if (opts.onAsk) answerQuestions(child.stdio[4], opts.onAsk);
    child.stdout.on('data', (c) => { out.push(c); opts.onStdout?.(c); });
    child.stderr.on('data', (c) => { err.push(c); opts.onStderr?.(c); });
    if (input !== undefined) {
      child.stdin.on('error', () => {}); // the command need not read it all
      child.stdin.end(input);
    }

    const finish = (code, sig) => {
      if (done) return;
      done = true;
      clearTimeout(timer); clearTimeout(killTimer); clearTimeout(closeTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      const report = takeReport(reportFd);
      const r = { exitCode: code, signal: sig, stdout, stderr, report };
      resolve({ outcome: stopped ?? classify(r), ...r });
    };
    child.on('error', (e) => {
      if (done) return;
      done = true;
      closeSync(reportFd);
      clearTimeout(timer); clearTimeout(killTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      reject(e);
    });
    // 'close' waits for the pipes; should something outside the sandbox's pid namespace (the
    // landlock backend has none) hold them, the exit is enough after a grace period.
    child.on('exit', (code, sig) => {
      closeTimer = setTimeout(() => {
        for (const s of child.stdio) s?.destroy?.();
        finish(code, sig);
      }, 1000);
    });
    child.on('close', (code, sig) => finish(code, sig));
  });
}

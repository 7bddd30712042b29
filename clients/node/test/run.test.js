// SPDX-License-Identifier: LGPL-2.1-or-later
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processesWith, workspace } from './helpers.js';
import { run, classify } from '../index.js';

test('ok: the command runs, its output and the report come back', async (t) => {
  const ws = workspace(t);
  const chunks = [];
  const r = await run(['sh', '-c', 'cat; echo done > out.txt'], {
    cwd: ws, input: 'hello\n', onStdout: (c) => chunks.push(c) });
  assert.equal(r.outcome, 'ok');
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout, 'hello\n');
  assert.equal(Buffer.concat(chunks).toString(), 'hello\n');
  assert.equal(readFileSync(join(ws, 'out.txt'), 'utf8'), 'done\n');
  assert.equal(r.report.mode, 'workspace-write');
  assert.ok(r.report.denial_signatures.length > 0);
});

test('failed: the exit status passes through', async (t) => {
  const r = await run(['sh', '-c', 'echo oops >&2; exit 3'], { cwd: workspace(t) });
  assert.equal(r.outcome, 'failed');
  assert.equal(r.exitCode, 3);
  assert.equal(r.stderr, 'oops\n');
});

test('denied: a write to a -- path', async (t) => {
  const ws = workspace(t);
  writeFileSync(join(ws, 'secret.pem'), 'key\n');
  const r = await run(['sh', '-c', 'echo x > secret.pem'], { cwd: ws, policy: { access: ['-- *.pem'] } });
  assert.equal(r.outcome, 'denied', r.stderr);
  assert.equal(readFileSync(join(ws, 'secret.pem'), 'utf8'), 'key\n');
});

test('denied: the broker refusal note (a new file under r-)', async (t) => {
  const ws = workspace(t);
  const r = await run(['sh', '-c', 'mkdir ro && echo x > ro/f || exit 4'], {
    cwd: ws, policy: { access: 'r- ro\n' } });
  assert.equal(r.outcome, 'denied', r.stderr);
  assert.match(r.stderr, /runtime broker refused/);
});

test('denied: read-only mode, a write (even in the workspace)', async (t) => {
  const ws = workspace(t);
  const r = await run(['sh', '-c', `echo x > ${ws}/f`], { cwd: ws, policy: { mode: 'read-only', workspace: ws } });
  assert.equal(r.outcome, 'denied', r.stderr);
});

test('sandbox-error: an invalid rule, nothing run', async (t) => {
  const r = await run(['true'], { cwd: workspace(t), policy: { access: ['nonsense'] } });
  assert.equal(r.outcome, 'sandbox-error');
  assert.equal(r.exitCode, 125);
  assert.equal(r.report, null);
});

test('a policy key without an option is refused, not dropped', () => {
  assert.throws(() => run(['true'], { policy: { tmp: 'private' } }), /config/);
});

async function stopped(t, how) {
  const marker = `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const ac = new AbortController();
  let started;
  const ready = new Promise((r) => { started = r; });
  const p = run(['sh', '-c', `sleep ${marker} & sleep ${marker} & echo up; wait`], {
    cwd: workspace(t), signal: how === 'abort' ? ac.signal : undefined,
    timeoutMs: how === 'timeout' ? 1500 : undefined, killAfterMs: 500,
    onStdout: (c) => { if (c.includes('up')) started(); } });
  await ready;
  // 'up' may come before the sleeps' exec
  let sleeps = [];
  for (let i = 0; i < 50 && sleeps.length < 2; i++, await sleep(10)) sleeps = processesWith(`sleep\0${marker}`);
  if (how === 'abort') ac.abort();
  assert.equal(sleeps.length, 2, 'both children started');
  const r = await p;
  // The sandbox's pid namespace dies with init; give the kernel a moment to reap it.
  for (let i = 0; i < 50 && processesWith(marker).length; i++) await sleep(20);
  assert.deepEqual(processesWith(marker), [], 'nothing left');
  return r;
}

test('aborted: the AbortSignal ends the whole sandbox', async (t) => {
  const r = await stopped(t, 'abort');
  assert.equal(r.outcome, 'aborted');
});

test('timeout: timeoutMs ends the whole sandbox', async (t) => {
  const r = await stopped(t, 'timeout');
  assert.equal(r.outcome, 'timeout');
});

test('aborted before the start runs nothing', async () => {
  const r = await run(['true'], { signal: AbortSignal.abort() });
  assert.equal(r.outcome, 'aborted');
});

test('classify: denial signatures are the report\'s, matched case-insensitively', () => {
  const report = { denial_signatures: ['permission denied'], runner_failure: { exit_code: 125, stderr_prefix: 'dshbox: error: ' } };
  assert.equal(classify({ exitCode: 1, signal: null, stderr: 'cat: x: Permission denied\n', report }), 'denied');
  assert.equal(classify({ exitCode: 1, signal: null, stderr: 'no such thing\n', report }), 'failed');
  assert.equal(classify({ exitCode: 125, signal: null, stderr: 'dshbox: error: bad\n', report }), 'sandbox-error');
  assert.equal(classify({ exitCode: 125, signal: null, stderr: 'mine\n', report }), 'failed');
});

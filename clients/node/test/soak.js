// SPDX-License-Identifier: LGPL-2.1-or-later
// The Node client's soak (issue 38): many commands through run(), a share of them ended by an
// AbortSignal (before the start, or while they run) or by timeoutMs, some that ignore SIGTERM (so
// that the SIGKILL after killAfterMs is what ends them), some that leave a process in the
// background.  Afterwards nothing may be left: no child of this process (living or zombie), no
// process anywhere running what a command started (each carries a marker in its argv), and no
// descriptor more than after the warm-up.  Importing this file runs nothing: soak.test.js runs it
// small in the suite, ../soak.js (make soak) runs it long.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { run } from '../index.js';

/** The pids whose PPid is this process (zombies included), and those whose argv holds marker. */
export function leftovers(marker) {
  const children = [], marked = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const ppid = Number(/^PPid:\s*(\d+)/m.exec(status)?.[1]);
      if (ppid === process.pid) children.push(`${pid} (${/^State:\s*(.*)$/m.exec(status)?.[1]})`);
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) marked.push(pid);
    } catch { /* gone */ }
  }
  return { children, marked };
}

export const openFds = () => readdirSync('/proc/self/fd').length - 1; // less readdir's own

// Memory after a collection when node runs with --expose-gc (make soak), else as it stands.
function memory() {
  globalThis.gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external };
}

// Each kind: the command, its options, and the outcome it must have.  `sleep MARKER` sleeps 1000 s
// (the marker is "1000.<digits>"), so only the abort or timeout ends it.
function kinds(marker) {
  const slow = ['sleep', marker];
  return [
    { name: 'ok', argv: ['true'], outcome: 'ok' },
    { name: 'ok', argv: ['true'], outcome: 'ok' },
    { name: 'exit-3', argv: ['sh', '-c', 'exit 3'], outcome: 'failed', exitCode: 3 },
    { name: 'denied', argv: ['sh', '-c', 'cat secret.pem'], policy: { access: ['-- *.pem'] }, outcome: 'denied' },
    { name: 'timeout', argv: slow, timeoutMs: () => 30 + rand(120), outcome: 'timeout' },
    { name: 'abort-running', argv: slow, abortAfterMs: () => rand(100), outcome: 'aborted' },
    { name: 'abort-before-start', argv: slow, abortBefore: true, outcome: 'aborted' },
    { name: 'background-left', argv: ['sh', '-c', `sleep ${marker} & echo up`], outcome: 'ok' },
    // sh and its sleep ignore SIGTERM: killAfterMs's SIGKILL to dshbox must end the sandbox.
    { name: 'term-ignored', argv: ['sh', '-c', `trap '' TERM; sleep ${marker}`], abortAfterMs: () => 20 + rand(60),
      killAfterMs: 100, outcome: 'aborted' },
    { name: 'timeout-term-ignored', argv: ['sh', '-c', `trap '' TERM; sleep ${marker}`], timeoutMs: () => 30 + rand(60),
      killAfterMs: 100, outcome: 'timeout' },
  ];
}

const rand = (n) => Math.floor(Math.random() * n);

async function one(k, ws) {
  const opts = { cwd: ws, policy: k.policy };
  let ac = null, timer = null;
  if (k.abortBefore) opts.signal = AbortSignal.abort();
  if (k.abortAfterMs) {
    ac = new AbortController();
    opts.signal = ac.signal;
    timer = setTimeout(() => ac.abort(), k.abortAfterMs());
  }
  if (k.timeoutMs) opts.timeoutMs = k.timeoutMs();
  if (k.killAfterMs) opts.killAfterMs = k.killAfterMs;
  try {
    const r = await run(k.argv, opts);
    if (r.outcome !== k.outcome || (k.exitCode !== undefined && r.exitCode !== k.exitCode))
      return `${k.name}: outcome ${r.outcome} (exit ${r.exitCode}, signal ${r.signal}, stderr ${JSON.stringify(r.stderr.slice(0, 200))}), expected ${k.outcome}`;
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * runs commands after warmup more, `concurrency` at a time.  Returns the figures and the failures
 * (each a line); ok is true when every run ended as its kind must and nothing is left.
 */
export async function soak({ runs = 2000, warmup = 20, concurrency = 4, settleMs = 3000 } = {}) {
  const marker = `1000.${process.pid}${rand(1e6)}`;
  // Under /var/tmp, as helpers.js's workspaces are.
  const ws = mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'dshbox-node-soak-'));
  writeFileSync(join(ws, 'secret.pem'), 'a key\n');
  const table = kinds(marker);
  const failures = [];
  const counts = {};
  let next = 0;
  const batch = async (end) => {
    const worker = async () => {
      for (let i; (i = next++) < end;) {
        const k = table[i % table.length];
        const f = await one(k, ws);
        if (f) failures.push(`run ${i} ${f}`);
        else counts[k.name] = (counts[k.name] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    next = end;
  };
  const settle = async () => {
    let left = leftovers(marker);
    for (let t = 0; t < settleMs / 20 && (left.children.length || left.marked.length); t++) {
      await sleep(20);
      left = leftovers(marker);
    }
    return left;
  };
  try {
    await batch(warmup);
    await settle();
    const warmFailures = failures.splice(0);
    for (const k of Object.keys(counts)) delete counts[k];
    const start = { fds: openFds(), ...memory() };
    const t0 = performance.now();
    await batch(warmup + runs);
    const seconds = (performance.now() - t0) / 1000;
    const left = await settle();
    const end = { fds: openFds(), ...memory() };
    if (warmFailures.length) failures.unshift(...warmFailures.map((f) => `warm-up ${f}`));
    const good = Object.values(counts).reduce((a, b) => a + b, 0);
    if (good !== runs) failures.push(`${good} of ${runs} runs ended as expected`);
    if (left.children.length) failures.push(`children of node left: ${left.children.join(', ')}`);
    if (left.marked.length) failures.push(`processes still running what a command started: ${left.marked.join(', ')}`);
    if (end.fds > start.fds) failures.push(`open descriptors: ${start.fds} after the warm-up, ${end.fds} at the end`);
    const figures = {
      runs, concurrency, seconds, counts, fdsStart: start.fds, fdsEnd: end.fds,
      rssStartKb: Math.round(start.rss / 1024), rssEndKb: Math.round(end.rss / 1024),
      heapStartKb: Math.round(start.heap / 1024), heapEndKb: Math.round(end.heap / 1024), gc: !!globalThis.gc,
      children: left.children.length, leftRunning: left.marked.length,
    };
    return { ok: failures.length === 0, failures, figures };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

export function summary({ ok, figures: f }) {
  return `node soak: ${f.runs} commands (${f.concurrency} at a time) in ${f.seconds.toFixed(1)} s ` +
    `(${(f.seconds * 1000 / f.runs).toFixed(1)} ms a command): fds ${f.fdsStart} -> ${f.fdsEnd}, ` +
    `RSS ${f.rssStartKb} -> ${f.rssEndKb} kB, JS heap${f.gc ? ' after gc' : ''} ${f.heapStartKb} -> ${f.heapEndKb} kB, children ${f.children}, left running ${f.leftRunning}: ` +
    `${ok ? 'ok' : 'FAIL'}  [${Object.entries(f.counts).map(([k, n]) => `${k} ${n}`).join(', ')}]`;
}

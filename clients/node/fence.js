// SPDX-License-Identifier: LGPL-2.1-or-later
// The file fence: one `dshbox serve --stdio` child, JSON lines both ways (docs/serve.md).
// Requests are written as they come, many in flight; answers are matched by id.  A server that
// dies fails what was pending (kind `server-exited`: a write may or may not have happened, so it
// is not sent again) and is started afresh by the next request.
import { spawn, execFile } from 'node:child_process';
import { findBinary } from './binary.js';
import { policyArgs } from './policy.js';
import { DshboxError, FenceError } from './errors.js';

function pathField(path) {
  if (typeof path === 'string') return { path };
  if (path instanceof Uint8Array) return { path_base64: Buffer.from(path).toString('base64') };
  throw new TypeError('path: expected a string, or a Buffer for a name that is not UTF-8');
}

function decodeEntry(e) {
  return e.name_base64 === undefined ? e : { ...e, nameBytes: Buffer.from(e.name_base64, 'base64') };
}

export function openFence(opts = {}) {
  const binary = findBinary({ binary: opts.binary, env: opts.env });
  const args = ['serve', ...policyArgs(opts), '--stdio'];
  const pending = new Map();
  let server = null;
  let nextId = 1;
  let closed = false;

  function start() {
    const child = spawn(binary, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const s = { child, buf: '', stderr: '', ids: new Set() };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      s.buf += chunk;
      let nl;
      while ((nl = s.buf.indexOf('\n')) >= 0) {
        const line = s.buf.slice(0, nl);
        s.buf = s.buf.slice(nl + 1);
        if (line.trim()) answer(s, line);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (c) => { s.stderr = (s.stderr + c).slice(-4096); });
    child.stdin.on('error', () => {}); // a dead server is handled on 'exit'
    child.on('error', (e) => gone(s, e));
    child.on('close', (code, sig) => gone(s, null, code, sig));
    return s;
  }

  function answer(s, line) {
    let a;
    try {
      a = JSON.parse(line);
    } catch {
      return;
    }
    const p = pending.get(a.id);
    if (!p) return; // an answer to no request of ours (id null: a line it could not read)
    pending.delete(a.id);
    s.ids.delete(a.id);
    if (a.ok) p.resolve(a);
    else p.reject(new FenceError(a.error ?? { kind: 'invalid', message: line }));
  }

  function gone(s, error, code, sig) {
    if (server === s) server = null;
    const why = s.stderr.trim();
    for (const id of s.ids) {
      const p = pending.get(id);
      if (!p) continue;
      pending.delete(id);
      if (error) p.reject(error);
      else if (code === 125 && why.includes('dshbox: error: '))
        p.reject(new DshboxError(why, { exitCode: code, stderr: s.stderr }));
      else
        p.reject(new FenceError({ kind: 'server-exited', op: p.op,
          message: `dshbox serve ended (${sig ?? `exit ${code}`}) with the request pending${why ? `: ${why}` : ''}` }));
    }
    s.ids.clear();
  }

  function request(op, fields) {
    if (closed) return Promise.reject(new Error('dshbox: the fence is closed'));
    if (!server) server = start();
    const s = server;
    const id = nextId++;
    const line = JSON.stringify({ id, op, ...fields }) + '\n';
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, op });
      s.ids.add(id);
      s.child.stdin.write(line);
    });
  }

  return {
    async read(path, o = {}) {
      const a = await request('read', { ...pathField(path), offset: o.offset, limit: o.limit });
      return a.encoding === 'base64' ? { ...a, content: Buffer.from(a.content, 'base64') } : a;
    },
    write(path, content, o = {}) {
      const body = typeof content === 'string'
        ? { content }
        : { content: Buffer.from(content).toString('base64'), encoding: 'base64' };
      return request('write', { ...pathField(path), ...body, expectVersion: o.expectVersion });
    },
    edit(path, oldText, newText, o = {}) {
      return request('edit', { ...pathField(path), old: oldText, new: newText, all: o.all,
        expectVersion: o.expectVersion });
    },
    async list(path) {
      const a = await request('list', pathField(path));
      return { ...a, entries: a.entries.map(decodeEntry) };
    },
    check(path, op = 'read') {
      if (typeof path !== 'string') return Promise.reject(new TypeError('check: path must be a string'));
      if (op !== 'read' && op !== 'write') return Promise.reject(new TypeError("check: op is 'read' or 'write'"));
      const cargs = ['check', ...policyArgs(opts), '--json', `--${op}`, '--', path];
      return new Promise((resolve, reject) => {
        execFile(binary, cargs, { cwd: opts.cwd, env: opts.env }, (err, stdout, stderr) => {
          const code = err ? err.code : 0;
          if (code !== 0 && code !== 1)
            return reject(new DshboxError(stderr.trim() || String(err), { exitCode: code, stderr }));
          const v = JSON.parse(stdout.split('\n')[0]);
          resolve({ ...v, allowed: v.verdict === 'allow' });
        });
      });
    },
    close() {
      closed = true;
      const s = server;
      server = null;
      if (!s) return Promise.resolve();
      return new Promise((resolve) => {
        if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
        s.child.once('close', () => resolve());
        s.child.stdin.end(); // end of input ends the server with exit 0, after the pending answers
      });
    },
  };
}

// SPDX-License-Identifier: LGPL-2.1-or-later
// The dsh services of @morlay/dsh-sandbox-local, on dshbox: the same config keys, unchanged,
// and session = { workspaceRoot, mode }.  The sandbox service confines an argv under
// `dshbox run`; the fs service answers read / write / edit / list through `dshbox serve`, so
// both entry points obey one policy, decided by one program.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary } from './binary.js';
import { accessRules, policyArgs } from './policy.js';
import { openFence } from './fence.js';

const KEYS = ['access', 'runnerCommand', 'runnerFailureSignatures', 'probeTimeoutMs', 'cwd', 'diffBasisMaxBytes', 'unprotect',
  'network'];
// The keys dshbox takes only from a configuration file.
const FILE_KEYS = ['runnerCommand', 'runnerFailureSignatures', 'probeTimeoutMs', 'diffBasisMaxBytes', 'unprotect', 'network'];
// SPEC 12: network as a mapping, checked here for shape; dshbox checks the patterns.
const NETWORK_KEYS = ['allowDomains', 'denyDomains', 'allowLocalBinding', 'ask', 'askTimeoutMs'];

function checkNetwork(v) {
  if (typeof v === 'boolean' || v === 'on' || v === 'off') return v;
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new TypeError('config.network: expected true/false, "on"/"off" or a mapping');
  for (const key of Object.keys(v)) {
    if (!NETWORK_KEYS.includes(key)) throw new TypeError(`config.network.${key}: unknown key (${NETWORK_KEYS.join(', ')})`);
    const x = v[key];
    const ok = key.endsWith('Domains') ? Array.isArray(x) && x.every((d) => typeof d === 'string')
      : key === 'askTimeoutMs' ? Number.isInteger(x) && x >= 0 : typeof x === 'boolean';
    if (!ok) throw new TypeError(`config.network.${key}: ${key.endsWith('Domains') ? 'expected a list of patterns' : 'bad value'}`);
  }
  return { ...v };
}

/** Checks the plugin's config and returns it normalised (access as a list). */
export function normaliseConfig(config = {}) {
  for (const key of Object.keys(config))
    if (!KEYS.includes(key)) throw new TypeError(`config.${key}: unknown key (${KEYS.join(', ')})`);
  const access = accessRules(config.access).map((r) => r.trim());
  for (const rule of access)
    if (!/^(rw|r-|--)\s+\S/.test(rule))
      throw new TypeError(`config.access: rule "${rule}": expected 'rw', 'r-' or '--', white space, then a path`);
  const out = { access };
  for (const key of ['runnerCommand', 'runnerFailureSignatures', 'unprotect']) {
    const v = config[key];
    if (v === undefined) continue;
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string'))
      throw new TypeError(`config.${key}: expected a list of strings`);
    if (v.length) out[key] = [...v];
  }
  for (const key of ['probeTimeoutMs', 'diffBasisMaxBytes']) {
    const v = config[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v < 0) throw new TypeError(`config.${key}: expected a non-negative integer`);
    out[key] = v;
  }
  if (config.network !== undefined) out.network = checkNetwork(config.network);
  if (config.cwd !== undefined) {
    if (typeof config.cwd !== 'string' || !config.cwd) throw new TypeError('config.cwd: expected a path');
    out.cwd = config.cwd;
  }
  return out;
}

function checkSession(session) {
  if (!session || typeof session.workspaceRoot !== 'string' || !session.workspaceRoot)
    throw new TypeError('session.workspaceRoot: expected a path');
}

// The file keys go to a dshbox.yml of their own (JSON is YAML), kept for the service's life: a
// confined argv must name it.  With protectDefaults dshbox makes the file in use r- for the run.
function configFile(cfg) {
  const present = FILE_KEYS.filter((k) => cfg[k] !== undefined);
  if (present.length === 0) return { path: undefined, dispose() {} };
  const dir = mkdtempSync(join(tmpdir(), 'dshbox-dsh-'));
  const path = join(dir, 'dshbox.yml');
  const doc = Object.fromEntries(present.map((k) => [k, cfg[k]]));
  // The plugin ran commands through runnerCommand whenever it was set: dshbox's runner backend.
  if (doc.runnerCommand) doc.backend = 'runner';
  writeFileSync(path, JSON.stringify(doc) + '\n', { mode: 0o600 });
  const dispose = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', dispose);
  return { path, dispose() { process.removeListener('exit', dispose); dispose(); } };
}

function options(cfg, session, file, withCwd) {
  return {
    config: file.path,
    policy: {
      mode: session.mode,
      workspace: session.workspaceRoot,
      cwd: withCwd ? cfg.cwd ?? process.cwd() : undefined,
      access: cfg.access,
    },
  };
}

export function createSandboxService(config, session, extra = {}) {
  const cfg = normaliseConfig(config);
  checkSession(session);
  const binary = findBinary(extra);
  const file = configFile(cfg);
  const args = policyArgs(options(cfg, session, file, false));
  return {
    binary,
    /** The argv that runs `argv` confined: [dshbox, run, POLICY OPTIONS..., --, ...argv]. */
    confine(argv) {
      if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string'))
        throw new TypeError('confine: argv must be a non-empty array of strings');
      return [binary, 'run', ...args, '--', ...argv];
    },
    dispose() { file.dispose(); },
  };
}

export function createFsService(config, session, extra = {}) {
  const cfg = normaliseConfig(config);
  checkSession(session);
  const file = configFile(cfg);
  const fence = openFence({ ...options(cfg, session, file, true), binary: extra.binary, env: extra.env });
  return {
    read: (path, o) => fence.read(path, o),
    write: (path, content, o) => fence.write(path, content, o),
    edit: (path, oldText, newText, o) => fence.edit(path, oldText, newText, o),
    list: (path) => fence.list(path),
    check: (path, op) => fence.check(path, op),
    async dispose() {
      await fence.close();
      file.dispose();
    },
  };
}

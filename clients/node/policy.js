// SPDX-License-Identifier: LGPL-2.1-or-later
// A policy object becomes dshbox's own policy options: no temporary file, nothing to clean up.
// Only the keys that have an option are accepted; the others need a configuration file
// (`config`), and saying so beats dropping them silently.

const MODES = ['read-only', 'workspace-write', 'danger-full-access'];
const BACKENDS = ['auto', 'linux-ns', 'landlock', 'runner', 'none'];

/** @param {string|string[]|undefined} access */
export function accessRules(access) {
  if (access === undefined || access === null) return [];
  if (typeof access === 'string')
    return access.split('\n').map((l) => l.replace(/\r$/, '')).filter((l) => l.trim() !== '');
  if (Array.isArray(access) && access.every((r) => typeof r === 'string')) return [...access];
  throw new TypeError('policy.access: expected a list of rules or a block with one rule per line');
}

/**
 * @param {{ policy?: object, config?: string }} opts
 * @returns {string[]} the POLICY OPTIONS of dshbox(1)
 */
export function policyArgs(opts = {}) {
  const args = [];
  if (opts.config !== undefined) {
    if (typeof opts.config !== 'string' || opts.config === '')
      throw new TypeError('config: expected the path of a dshbox.yml');
    args.push('--config', opts.config);
  }
  const p = opts.policy ?? {};
  for (const [key, v] of Object.entries(p)) {
    if (v === undefined) continue;
    switch (key) {
      case 'mode':
        if (!MODES.includes(v)) throw new TypeError(`policy.mode: expected one of ${MODES.join(', ')}`);
        args.push('--mode', v);
        break;
      case 'workspace':
      case 'cwd':
        if (typeof v !== 'string' || v === '') throw new TypeError(`policy.${key}: expected a path`);
        args.push(`--${key}`, v);
        break;
      case 'access':
        for (const rule of accessRules(v)) args.push('--access', rule);
        break;
      case 'network':
        if (typeof v !== 'boolean' && v !== 'on' && v !== 'off')
          throw new TypeError('policy.network: expected true/false or "on"/"off"');
        args.push('--network', v === true || v === 'on' ? 'on' : 'off');
        break;
      case 'allowDomains':
      case 'denyDomains':
        if (!Array.isArray(v) || v.some((d) => typeof d !== 'string' || d === ''))
          throw new TypeError(`policy.${key}: expected a list of patterns`);
        for (const d of v) args.push(key === 'allowDomains' ? '--allow-domain' : '--deny-domain', d);
        break;
      case 'backend':
        if (!BACKENDS.includes(v)) throw new TypeError(`policy.backend: expected one of ${BACKENDS.join(', ')}`);
        args.push('--backend', v);
        break;
      case 'allowDegraded':
        if (typeof v !== 'boolean') throw new TypeError('policy.allowDegraded: expected a boolean');
        if (v) args.push('--allow-degraded');
        break;
      default:
        throw new TypeError(`policy.${key}: dshbox has no command-line option for it; ` +
          'put it in a dshbox.yml and pass { config: FILE }');
    }
  }
  return args;
}

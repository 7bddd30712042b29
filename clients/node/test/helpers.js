// SPDX-License-Identifier: LGPL-2.1-or-later
// The built binary (DSHBOX, default ../../build/dshbox) and scratch workspaces.  Workspaces live
// under /var/tmp: read-only mode gives the command a private /tmp, where a workspace under the
// host's /tmp would not exist.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const binary = resolve(here, '..', process.env.DSHBOX ?? '../../build/dshbox');
process.env.DSHBOX = binary;

export function workspace(t) {
  const base = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();
  const dir = mkdtempSync(join(base, 'dshbox-node-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The pids whose command line holds `marker`. */
export function processesWith(marker) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(pid);
    } catch { /* gone */ }
  }
  return found;
}

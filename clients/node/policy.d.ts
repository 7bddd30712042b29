// SPDX-License-Identifier: LGPL-2.1-or-later
export type Mode = 'read-only' | 'workspace-write' | 'danger-full-access';

/**
 * The part of a dshbox.yml that has command-line options (dshbox(1), POLICY OPTIONS).  Other keys
 * (env, tmp, runnerCommand, ...) are refused with a TypeError: put them in a file and pass `config`.
 */
export interface Policy {
  mode?: Mode;
  /** The workspace root (default: the current directory of dshbox). */
  workspace?: string;
  /** Base of relative paths given to the file fence. */
  cwd?: string;
  /** `rw PATH`, `r- PATH|GLOB`, `-- PATH|GLOB`: a list, or a block with one rule per line. */
  access?: string[] | string;
  network?: boolean | 'on' | 'off';
  /** The network by name (SPEC 12): `name`, `*.name`, `name:PORT`, an IP literal or CIDR block;
   *  either list filters the network (it excludes `network`). Deny beats allow. */
  allowDomains?: string[];
  denyDomains?: string[];
  backend?: 'auto' | 'linux-ns' | 'landlock' | 'runner' | 'none';
  allowDegraded?: boolean;
}

export interface PolicyOptions {
  /** Policy options given as flags; they override `config` and add to its rules. */
  policy?: Policy;
  /** The path of a dshbox.yml (dshbox.yml(5)). */
  config?: string;
}

/** The rules of `access`, one per element (blank lines of a block dropped). */
export function accessRules(access: string[] | string | undefined): string[];
/** The dshbox POLICY OPTIONS for `opts`. */
export function policyArgs(opts?: PolicyOptions): string[];

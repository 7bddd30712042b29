// SPDX-License-Identifier: LGPL-2.1-or-later
import type { Mode } from './policy.js';
import type { Fence } from './fence.js';

/** The config of @morlay/dsh-sandbox-local, unchanged. */
export interface DshConfig {
  /** `rw PATH` / `r- PATH|GLOB` / `-- PATH|GLOB`: a list, or a block with one rule per line. */
  access?: string[] | string;
  /** dshbox's `runnerCommand` (the runner backend); dshbox refuses it together with rules. */
  runnerCommand?: string[];
  runnerFailureSignatures?: string[];
  probeTimeoutMs?: number;
  /** Base of relative paths given to the fs service (default: process.cwd()). */
  cwd?: string;
  diffBasisMaxBytes?: number;
  /**
   * dshbox's `unprotect`: names left writable of those it keeps `r-` in each writable root in
   * workspace-write (`.git/hooks`, `.git/config`, `.gitconfig`, `.gitmodules`, the shells' start-up
   * files, `.envrc`, `.ripgreprc`, `.mcp.json`, `.claude`, `.codex`, `.agents`, `.cursor`,
   * `.gemini`, `.vscode`, `.idea`, `cordis.patch.yml`; docs/policy.md lists them all).
   */
  unprotect?: string[];
  /** dshbox's `network`: on/off, or by name (SPEC 12; docs/network.md). */
  network?: boolean | 'on' | 'off' | {
    allowDomains?: string[]; denyDomains?: string[]; allowLocalBinding?: boolean; ask?: boolean; askTimeoutMs?: number;
  };
}

export interface DshSession {
  workspaceRoot: string;
  mode?: Mode;
}

export interface DshExtra {
  /** The dshbox program (default: $DSHBOX, then the PATH). */
  binary?: string;
  env?: NodeJS.ProcessEnv;
}

export interface SandboxService {
  /** The absolute path of the dshbox program the argv names. */
  binary: string;
  /** The argv that runs `argv` under `dshbox run` with this policy. */
  confine(argv: string[]): string[];
  /** Removes the configuration file made for the keys dshbox reads only from a file. */
  dispose(): void;
}

export interface FsService extends Pick<Fence, 'read' | 'write' | 'edit' | 'list' | 'check'> {
  dispose(): Promise<void>;
}

/** Throws a TypeError for an unknown key or a rule without its prefix (load-time failure). */
export function normaliseConfig(config?: DshConfig): DshConfig & { access: string[] };
export function createSandboxService(config: DshConfig, session: DshSession, extra?: DshExtra): SandboxService;
export function createFsService(config: DshConfig, session: DshSession, extra?: DshExtra): FsService;

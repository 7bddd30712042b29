// SPDX-License-Identifier: LGPL-2.1-or-later
import type { PolicyOptions } from './policy.js';

export type Outcome = 'ok' | 'failed' | 'denied' | 'sandbox-error' | 'timeout' | 'aborted';

/** One destination a filtered network refused: 0 as port is a DNS query. */
export interface NetRefusal {
  name: string; port: number; via: 'dns' | 'http' | 'socks' | 'mapped' | 'sni' | 'host' | '-';
  reason: string; count: number;
}

/** The `--report` JSON (schema/report.schema.json); unknown fields may be added. */
export interface RunReport {
  backend: string;
  enforcement: 'full' | 'partial';
  mode: string;
  network: boolean;
  rules: Array<{
    rule: string; kind: 'rw' | 'r-' | '--'; origin?: string; path: string;
    process: { enforcement: string; how: string; lost?: string };
    file_fence: { enforcement: string; how: string };
  }>;
  denial_signatures: string[];
  runner_failure: { exit_code: number; stderr_prefix: string };
  warnings: string[];
  notes: string[];
  environment?: { inherit: string; removed: string[] };
  /** A filtered network (SPEC 12.3); `refused` once the run is over. */
  network_filter?: {
    allowDomains: Array<{ pattern: string; origin: string }>;
    denyDomains: Array<{ pattern: string; origin: string }>;
    allowLocalBinding: boolean;
    ask: boolean;
    askTimeoutMs: number;
    enforcement: 'full' | 'partial';
    how: string;
    refused?: NetRefusal[];
  };
  [key: string]: unknown;
}

export interface RunOptions extends PolicyOptions {
  /** dshbox's own current directory (the default workspace and cwd). */
  cwd?: string;
  /** dshbox's environment; the command gets it filtered by the policy's `env`. */
  env?: NodeJS.ProcessEnv;
  /** The command's stdin; by default it reads /dev/null. */
  input?: string | Buffer;
  signal?: AbortSignal;
  /** End the sandbox after this long: SIGTERM, then SIGKILL after `killAfterMs`. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL, on abort or timeout (default 2000). */
  killAfterMs?: number;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /**
   * SPEC 12.4: with a filtered network (`policy.allowDomains`), a name in neither list is asked of
   * this callback before the command reaches it (port 0: a DNS lookup).  Its answer, or `deny`
   * when it throws; dshbox denies by itself after `askTimeoutMs`.
   */
  onAsk?: (q: { name: string; port: number; via: 'dns' | 'http' | 'socks' | 'mapped' }) =>
    'allow-once' | 'allow-run' | 'deny' | Promise<'allow-once' | 'allow-run' | 'deny'>;
  /** The dshbox program (default: $DSHBOX, then the PATH). */
  binary?: string;
}

export interface RunResult {
  /**
   * `ok`: exit 0; `failed`: any other end; `denied`: failed, and its stderr carries one of the
   * report's denial signatures or dshbox's note that the runtime broker refused calls;
   * `sandbox-error`: dshbox failed and ran nothing (the report's runner_failure);
   * `timeout` / `aborted`: ended by `timeoutMs` / `signal`, nothing of the sandbox left.
   */
  outcome: Outcome;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** null when dshbox stopped before writing it (an invalid policy). */
  report: RunReport | null;
}

export function run(argv: string[], options?: RunOptions): Promise<RunResult>;
/** The arguments of `dshbox run` for argv, its report on descriptor 3 (what `run` passes). */
export function runArgs(argv: string[], options?: PolicyOptions): string[];
export function classify(r: Pick<RunResult, 'exitCode' | 'signal' | 'stderr' | 'report'>):
  'ok' | 'failed' | 'denied' | 'sandbox-error';

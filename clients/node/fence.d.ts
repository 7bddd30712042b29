// SPDX-License-Identifier: LGPL-2.1-or-later
import type { PolicyOptions } from './policy.js';

/** A path: a string, or a Buffer for a name that is not UTF-8 (sent as `path_base64`). */
export type FencePath = string | Uint8Array;

export interface ReadAnswer {
  ok: true; op: 'read';
  /** The canonical path (`"?"` when not UTF-8; then `path_base64` holds it). */
  path: string; path_base64?: string;
  /** The bytes: a string when they are valid UTF-8, else a Buffer. */
  content: string | Buffer;
  encoding: 'utf-8' | 'base64';
  size: number; offset: number; length: number; eof: boolean;
  /** Opaque: hand it back as `expectVersion` so a write does not lose a change you have not seen. */
  version: string;
}

export interface WriteAnswer {
  ok: true; op: 'write' | 'edit';
  path: string; path_base64?: string;
  created: boolean; bytes: number;
  /** A unified diff, or null (new file, binary, beyond diffBasisMaxBytes). */
  diff: string | null;
  version: string;
  /** false for a write in place (the directory refuses new entries). */
  atomic: boolean;
  /** edit only. */
  replacements?: number;
}

export interface ListEntry {
  name?: string; name_base64?: string; nameBytes?: Buffer;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size?: number; writable: boolean; denied?: true;
}

export interface ListAnswer {
  ok: true; op: 'list'; path: string; path_base64?: string;
  entries: ListEntry[]; truncated: boolean;
}

export interface CheckAnswer {
  verdict: 'allow' | 'deny'; allowed: boolean;
  op: 'read' | 'write'; path: string;
  rule: string | null; root: string | null; reason: string;
}

export interface Fence {
  read(path: FencePath, options?: { offset?: number; limit?: number }): Promise<ReadAnswer>;
  /** A string is written as UTF-8; a Buffer as its bytes. */
  write(path: FencePath, content: string | Uint8Array, options?: { expectVersion?: string }): Promise<WriteAnswer>;
  edit(path: FencePath, oldText: string, newText: string,
    options?: { all?: boolean; expectVersion?: string }): Promise<WriteAnswer>;
  list(path: FencePath): Promise<ListAnswer>;
  /** The verdict `dshbox check` gives (a process of its own; no bytes are touched). */
  check(path: string, op?: 'read' | 'write'): Promise<CheckAnswer>;
  /** Ends the server after the pending answers. */
  close(): Promise<void>;
}

export interface FenceOptions extends PolicyOptions {
  /** The server's current directory (the default workspace and base of relative paths). */
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  binary?: string;
}

/**
 * One `dshbox serve --stdio` child for many requests.  A failure rejects with a FenceError
 * (`kind`, `path`, `rule`); an invalid policy with a DshboxError.  A server that dies fails the
 * pending requests (`server-exited`) and is restarted by the next one.
 */
export function openFence(options?: FenceOptions): Fence;

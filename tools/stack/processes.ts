import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * A tiny supervisor that runs between us and a child we cannot teach to watch its parent
 * (the `temporal` binary). It forwards SIGTERM/SIGINT, and if our process dies without
 * stopping it (SIGKILL, crash), the IPC channel closes and it takes the child down too:
 * no orphaned servers, whatever happens to us.
 */
const GUARDIAN_SOURCE = `
const { spawn } = require('node:child_process');
const [command, ...args] = process.argv.slice(1);
const child = spawn(command, args, { stdio: 'inherit' });
let stopping = false;
const stop = (signal) => {
  if (stopping) return;
  stopping = true;
  child.kill(signal);
  setTimeout(() => child.kill('SIGKILL'), 10000).unref();
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
process.on('disconnect', () => stop('SIGTERM'));
child.on('error', (error) => { console.error(String(error)); process.exit(127); });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;

export interface GuardedProcess {
  child: ChildProcess;
  /** Resolves with the exit code once the process (and the guarded command) has exited. */
  exited: Promise<number | null>;
  stop(timeoutMs?: number): Promise<void>;
}

function track(child: ChildProcess): GuardedProcess {
  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  return {
    child,
    exited,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs `command` under the guardian. stdio 0..2 follow `options.stdio`; fd 3 is the IPC link. */
/**
 * What every process we start gets unless the caller's environment says otherwise. glibc gives
 * each thread that allocates its own malloc arena (up to 8 per core), and a worker's threads (the
 * SDK's native core, the workflow threads) left about 250 MB in them that the process never gave
 * back: with two arenas, 1,000 blocked jobs ended at 291 MB of worker RSS instead of 549
 * (docs/benchmark.md). The Dockerfile sets the same.
 */
const PROCESS_ENV_DEFAULTS: NodeJS.ProcessEnv = { MALLOC_ARENA_MAX: '2' };

export function spawnGuarded(
  command: string,
  args: string[],
  options: {
    stdio?: [
      'ignore' | 'inherit',
      'inherit' | 'ignore' | 'pipe' | number,
      'inherit' | 'ignore' | 'pipe' | number,
    ];
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    /** In a process group of its own: a terminal's Ctrl-C reaches us, and we stop it. */
    detached?: boolean;
  } = {},
): GuardedProcess {
  const stdio = options.stdio ?? ['ignore', 'inherit', 'inherit'];
  const child = spawn(process.execPath, ['-e', GUARDIAN_SOURCE, command, ...args], {
    stdio: [...stdio, 'ipc'],
    env: { ...PROCESS_ENV_DEFAULTS, ...(options.env ?? process.env) },
    cwd: options.cwd,
    detached: options.detached ?? false,
  });
  return track(child);
}

/** Runs a Node.js script of ours with an IPC link; the script exits when that link closes. */
export function spawnNodeScript(
  script: string,
  args: string[],
  options: SpawnOptions = {},
): GuardedProcess {
  const child = spawn(process.execPath, [script, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    ...options,
    env: { ...PROCESS_ENV_DEFAULTS, ...(options.env ?? process.env) },
  });
  return track(child);
}

/** A process's parent, group and state letter from /proc (Linux), or undefined once it is gone. */
function procStat(pid: number): { ppid: number; pgrp: number; state: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state && ppid && pgrp ? { state, ppid: Number(ppid), pgrp: Number(pgrp) } : undefined;
  } catch {
    return undefined;
  }
}

/** The process group of `pid` (Linux), or undefined once it is gone. */
export function processGroup(pid: number): number | undefined {
  return procStat(pid)?.pgrp;
}

/**
 * The ids of `pid`'s live children (Linux only): how a fault injector reaches the program a
 * guardian runs, or a server's worker processes, to kill them itself.
 */
export function childPids(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((candidate) => {
      const stat = procStat(candidate);
      return stat !== undefined && stat.ppid === pid && stat.state !== 'Z';
    });
}

/** Whether `pid` still runs: a zombie (dead, not yet reaped by its parent) does not. */
export function isRunning(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** The kernel's range for outgoing connections' local ports (Linux; a common default elsewhere). */
export function ephemeralPortRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    if (low && high) return [low, high];
  } catch {
    // not Linux
  }
  return [32768, 60999];
}

/**
 * Ports handed out by any process of ours on this machine (a test run's workers, the stacks and
 * campaigns they start), so that two of them never pick the same free port in the moment before
 * either binds it (seen: a worker's health port taken by another test's process). A claim is a
 * file named by the port and a time slot, made with O_EXCL; it holds for its slot and the next,
 * one to two minutes, far longer than any start takes to bind what it picked.
 */
const CLAIM_SLOT_MS = 60_000;
const claimsDir = path.join(os.tmpdir(), `onejob-port-claims-${process.getuid?.() ?? 'user'}`);
let claimsSwept = false;

export function claimPort(port: number): boolean {
  const slot = Math.floor(Date.now() / CLAIM_SLOT_MS);
  mkdirSync(claimsDir, { recursive: true, mode: 0o700 });
  if (!claimsSwept) {
    claimsSwept = true;
    // Claims of slots long past: nobody checks them any more.
    for (const name of readdirSync(claimsDir))
      if (Number(name.split('.')[1]) < slot - 1)
        rmSync(path.join(claimsDir, name), { force: true });
  }
  try {
    readFileSync(path.join(claimsDir, `${port}.${slot - 1}`));
    return false; // claimed in the slot before: still held
  } catch {
    // not claimed then
  }
  try {
    writeFileSync(path.join(claimsDir, `${port}.${slot}`), String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    return false; // claimed in this slot by someone else
  }
}

/**
 * A port that is free now and that no outgoing connection will take before our server binds
 * it: chosen below the kernel's ephemeral range (a port the kernel handed out for "any port"
 * may be given to a client socket a moment later, and the server would fail to bind), and
 * claimed, so that no other process of ours takes it meanwhile.
 */
const handedOut = new Set<number>();
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [ephemeralLow] = ephemeralPortRange();
  const low = 10_000;
  const high = Math.max(low + 1_000, ephemeralLow - 1);
  for (let tries = 0; tries < 200; tries++) {
    const port = low + Math.floor(Math.random() * (high - low));
    // Never the same port twice from this process, even if the first was not bound yet.
    if (handedOut.has(port) || !(await isPortFree(port, host)) || !claimPort(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${low} and ${high}`);
}

export async function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Follows the steps a service of ours reports as it starts (tellParent in src/bin/parentLink.ts).
 * Attach it right after the spawn; it says where the start stands, for a wait that gives up.
 */
export function startupProgress(proc: GuardedProcess): () => string {
  let step = 'before its first step';
  let since = Date.now();
  proc.child.on('message', (message: { starting?: unknown; ready?: unknown }) => {
    if (typeof message.starting !== 'string' && message.ready !== true) return;
    step = typeof message.starting === 'string' ? message.starting : 'ready';
    since = Date.now();
  });
  return () => `its start was at "${step}" for ${Math.round((Date.now() - since) / 1000)} s`;
}

/**
 * Waits for a service of ours to say it is ready (tellParent's `ready`), or fails once it has
 * exited or `timeoutMs` has passed, saying where its start stood.
 */
export function waitForReady(proc: GuardedProcess, timeoutMs: number): Promise<void> {
  const progress = startupProgress(proc);
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not ready within ${timeoutMs} ms (${progress()})`)),
      timeoutMs,
    );
    proc.child.on('message', (message: { ready?: unknown }) => {
      if (message.ready !== true) return;
      clearTimeout(timer);
      resolve();
    });
    void proc.exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`exited (code ${code}) before it was ready (${progress()})`));
    });
  });
}

/**
 * Waits until `url` answers 2xx, or fails once the process behind it has exited. A failure says
 * what the last try got and, given `progress` (startupProgress), where the process's start stood.
 */
export async function waitForHttp(
  url: string,
  timeoutMs: number,
  exited: Promise<unknown>,
  progress?: () => string,
): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + timeoutMs;
  let lastTry = 'no try yet';
  while (Date.now() < deadline && !gone) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return;
      lastTry = `answered ${response.status}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      lastTry = cause ?? (error as Error).message; // ECONNREFUSED: nothing listens yet
    }
    await sleep(200);
  }
  const where = [`last try: ${lastTry}`, ...(progress ? [progress()] : [])].join('; ');
  throw new Error(
    gone
      ? `${url}: the process exited before it answered (${where})`
      : `${url} did not answer within ${timeoutMs} ms (${where})`,
  );
}

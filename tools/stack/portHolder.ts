import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Who listens on a TCP port, from /proc alone (Linux): the listening socket's inode in
 * /proc/net/tcp{,6}, then the process with that socket among its open files. Undefined when it
 * cannot be told (not Linux, or a process of another user whose files we may not read).
 */
const LISTEN = '0A';

function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const [local, state, inode] = [fields[1], fields[3], fields[9]];
      if (!local || state !== LISTEN || !inode || inode === '0') continue;
      if (Number.parseInt(local.split(':').pop() ?? '', 16) === port) inodes.add(inode);
    }
  }
  return inodes;
}

function commandOf(pid: number): string {
  try {
    const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const command = words.join(' ');
    return command.length > 100 ? `${command.slice(0, 97)}...` : command;
  } catch {
    return '?';
  }
}

export interface PortHolder {
  pid: number;
  command: string;
}

export function portHolder(port: number): PortHolder | undefined {
  const sockets = new Set([...listeningInodes(port)].map((inode) => `socket:[${inode}]`));
  if (sockets.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  for (const entry of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    for (const fd of fds) {
      try {
        if (sockets.has(readlinkSync(`/proc/${entry}/fd/${fd}`))) {
          const pid = Number(entry);
          return { pid, command: commandOf(pid) };
        }
      } catch {
        // closed while we looked
      }
    }
  }
  return undefined;
}

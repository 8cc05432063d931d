// CPU time spent by a process and by everything it started (for the benchmarks: the service
// process and its embedded PostgreSQL), read from /proc. Linux only; elsewhere it reads undefined.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

export interface TreeCpuMs {
  /** The process itself (user + system). */
  own: number;
  /** Every descendant, including the children they have already reaped. */
  descendants: number;
}

const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  pid: number;
  parent: number;
  /** utime + stime */
  ownTicks: number;
  /** cutime + cstime: children this process has waited for */
  reapedTicks: number;
}

function readStat(pid: number): Stat | undefined {
  try {
    // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, parent: Number(fields[1]), ownTicks: Number(fields[11]) + Number(fields[12]), reapedTicks: Number(fields[13]) + Number(fields[14]) };
  } catch {
    return undefined; // gone between listing and reading
  }
}

export function processTreeCpuMs(rootPid: number): TreeCpuMs | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const stats = entries.filter((name) => /^\d+$/.test(name)).flatMap((name) => readStat(Number(name)) ?? []);
  const root = stats.find((stat) => stat.pid === rootPid);
  if (!root) return undefined;
  const children = new Map<number, Stat[]>();
  for (const stat of stats) {
    const siblings = children.get(stat.parent);
    if (siblings) siblings.push(stat);
    else children.set(stat.parent, [stat]);
  }
  let descendantTicks = root.reapedTicks;
  const pending = [...(children.get(rootPid) ?? [])];
  for (let stat = pending.pop(); stat; stat = pending.pop()) {
    descendantTicks += stat.ownTicks + stat.reapedTicks;
    pending.push(...(children.get(stat.pid) ?? []));
  }
  const ms = (ticks: number) => (ticks * 1000) / ticksPerSecond;
  return { own: ms(root.ownTicks), descendants: ms(descendantTicks) };
}

// Where gitCommit may write in its checkout of a repository: the rules for the kit's paths against
// what the repository holds (links, files, folders, and .git in every spelling).
import * as fs from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { HostCapabilityError } from '../errors.ts';

type GitFile = { path: string; content: string };

// Characters HFS+ ignores in names, so that ".g\u200Cit" opens ".git" on a Mac.
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g;

/**
 * Git's own test for a name that reaches .git on some file system a clone may land on: any letter
 * case, trailing dots and spaces or the 8.3 short name `git~1` (NTFS), ignorable characters (HFS+).
 */
export function namesGitDirectory(segment: string): boolean {
  const name = segment.replace(HFS_IGNORED, '').toLowerCase().replace(/[. ]+$/, '');
  return name === '.git' || /^\.?git~[1-9]$/.test(name);
}

/** One of the kit's paths cannot be a file while another needs it as a folder (`a`, `a/b.md`). */
export function refuseFileFolderClashes(files: GitFile[]): void {
  const paths = new Set(files.map((file) => file.path));
  for (const file of files) {
    const segments = file.path.split('/');
    for (let end = 1; end < segments.length; end++) {
      const folder = segments.slice(0, end).join('/');
      if (paths.has(folder)) throw new HostCapabilityError(`files "${folder}" and "${file.path}" clash: "${folder}" cannot be both a file and a folder`);
    }
  }
}

/**
 * The checkout holds whatever the repository does, symbolic links included (`docs -> /root/.ssh`),
 * so a path is written only when no part of it that exists is a link and each part is the kind the
 * path needs. Every path is checked before any is written.
 */
export async function checkWorkTreeTargets(dir: string, files: GitFile[]): Promise<void> {
  // Files share folders: each part of a path is looked at once.
  const seen = new Map<string, Promise<fs.Stats | null>>();
  const statsOf = (part: string) => {
    let stats = seen.get(part);
    if (stats === undefined) {
      stats = lstat(join(dir, part)).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      seen.set(part, stats);
    }
    return stats;
  };
  for (const file of files) {
    const segments = file.path.split('/');
    for (let end = 1; end <= segments.length; end++) {
      const part = segments.slice(0, end).join('/');
      const stats = await statsOf(part);
      if (stats === null) break;
      if (stats.isSymbolicLink()) throw new HostCapabilityError(`cannot write "${file.path}": "${part}" is a symbolic link in the repository, and gitCommit never writes through one`);
      if (end < segments.length && !stats.isDirectory()) throw new HostCapabilityError(`cannot write "${file.path}": "${part}" is a file in the repository, not a folder`);
      if (end === segments.length && !stats.isFile()) throw new HostCapabilityError(`cannot write "${file.path}": it is a folder in the repository`);
    }
  }
}

/** Writes a path checkWorkTreeTargets passed; O_NOFOLLOW keeps even a link made since from being followed. */
export async function writeWorkTreeFile(dir: string, file: GitFile): Promise<void> {
  const target = join(dir, file.path);
  try {
    await mkdir(dirname(target), { recursive: true });
    const handle = await open(target, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(file.content, 'utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new HostCapabilityError(`cannot write "${file.path}": ${code === 'ELOOP' ? 'it is a symbolic link' : `the file system answered ${String(code)}`}`);
  }
}

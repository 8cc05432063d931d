import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../control-plane/config.ts';
import { gitRemotePolicy } from '../../control-plane/jobs/worker.ts';

/** The remotes platform kits may push to (and send a stored credential to) under KIT_GIT_ALLOWED_REMOTES. */
function allows(setting: string, remote: string): boolean {
  return gitRemotePolicy(loadConfig({ KIT_GIT_ALLOWED_REMOTES: setting }).kitGitAllowedRemotes)(new URL(remote));
}

describe('KIT_GIT_ALLOWED_REMOTES', () => {
  it('allows remotes on a listed origin under a listed path', () => {
    expect(allows('https://git.example.com', 'https://git.example.com/team/specs.git')).toBe(true);
    expect(allows('https://GIT.example.com/team/', 'https://git.example.com/team/specs.git')).toBe(true);
    expect(allows('https://a.example.com/, http://10.0.0.5:3000/team/', 'http://10.0.0.5:3000/team/specs.git')).toBe(true);
  });

  it('refuses another host, port or scheme that merely starts with the same text', () => {
    // Compared as text, each of these passed, and the push (with its credential) went there.
    expect(allows('https://git.example.com', 'https://git.example.com.attacker.net/specs.git')).toBe(false);
    expect(allows('https://git.example.com', 'https://git.example.com:8443/specs.git')).toBe(false);
    expect(allows('http://10.0.0.5:3', 'http://10.0.0.5:3000/specs.git')).toBe(false);
    expect(allows('https://git.example.com/team/', 'https://git.example.com/other/specs.git')).toBe(false);
  });

  it('refuses a folder whose name merely starts with the prefix path', () => {
    expect(allows('https://git.example.com/team', 'https://git.example.com/teamevil/specs.git')).toBe(false);
    expect(allows('https://git.example.com/team/specs', 'https://git.example.com/team/specs-leak.git')).toBe(false);
    expect(allows('https://git.example.com/team', 'https://git.example.com/team/specs.git')).toBe(true);
    expect(allows('https://git.example.com/team/specs', 'https://git.example.com/team/specs.git')).toBe(true);
  });

  it('refuses an entry that is not an http(s) URL, naming its position rather than echoing it (it may hold a token)', () => {
    expect(() => loadConfig({ KIT_GIT_ALLOWED_REMOTES: 'https://git.example.com/, git.example.com/s3cret' })).toThrow(
      /^Invalid configuration:\n {2}KIT_GIT_ALLOWED_REMOTES: each entry must be an http\(s\) URL prefix, like https:\/\/git\.example\.com\/team\/; not one: entry 2$/,
    );
  });
});

import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The Bash tool's sandbox: bubblewrap (`bwrap`). A command sees the workspace folder
 * (read-write, at its own path), read-only system folders and a few harmless files of /etc,
 * a private /tmp, /dev and /proc (its own PID namespace: no server process, no server
 * environment), and nothing else: no data folder, no other space, no secrets.
 */

/** System folders bound read-only (or recreated as the symlinks they are, on merged-/usr systems). */
const SYSTEM_PATHS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * Files and folders of /etc a shell and the usual tools need. Not /etc as a whole: it can
 * hold shadow, keys, mounted secrets and the like.
 */
const ETC_PATHS = [
  '/etc/alternatives',
  '/etc/bash.bashrc',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/debian_version',
  '/etc/gitconfig',
  '/etc/group',
  '/etc/host.conf',
  '/etc/hosts',
  '/etc/inputrc',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/mime.types',
  '/etc/nsswitch.conf',
  '/etc/os-release',
  '/etc/passwd',
  '/etc/profile',
  '/etc/protocols',
  '/etc/resolv.conf',
  '/etc/services',
  '/etc/ssl',
  '/etc/timezone',
];

/** The whole environment a sandboxed command gets: nothing from the server's. */
export function sandboxEnvironment(workspace: string): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: workspace,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    TMPDIR: '/tmp',
  };
}

/** How a system path looks on this host: a folder to bind, a symlink to recreate, or absent. */
export type PathLayout = { path: string; kind: 'folder' } | { path: string; kind: 'symlink'; target: string };

export function hostLayout(paths: readonly string[] = SYSTEM_PATHS): PathLayout[] {
  const out: PathLayout[] = [];
  for (const path of paths) {
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) out.push({ path, kind: 'symlink', target: readlinkSync(path) });
      else if (st.isDirectory()) out.push({ path, kind: 'folder' });
    } catch {
      /* not on this host */
    }
  }
  return out;
}

export interface SandboxSpec {
  /** The workspace folder (canonical): the only writable place, and the working folder. */
  workspace: string;
  /** Whether the command keeps the host's network (else it has none, loopback included). */
  network: boolean;
  layout: readonly PathLayout[];
}

/** bwrap's arguments up to (not including) the command. Pure: the layout is passed in. */
export function sandboxArgs(spec: SandboxSpec): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv'];
  if (spec.network) args.push('--share-net');
  for (const entry of spec.layout) {
    if (entry.kind === 'symlink') args.push('--symlink', entry.target, entry.path);
    else args.push('--ro-bind', entry.path, entry.path);
  }
  for (const path of ETC_PATHS) args.push('--ro-bind-try', path, path);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  args.push('--bind', spec.workspace, spec.workspace, '--chdir', spec.workspace);
  for (const [name, value] of Object.entries(sandboxEnvironment(spec.workspace))) args.push('--setenv', name, value);
  return args;
}

/**
 * Whether the sandbox works here: bwrap is installed and can actually create its namespaces
 * (containers often forbid user namespaces). Tried once, with a throwaway workspace.
 */
export async function probeSandbox(
  bwrap: string,
  network: boolean,
  timeoutMs = 5000,
): Promise<{ ok: boolean; reason?: string }> {
  if (!existsSync(bwrap)) return { ok: false, reason: `${bwrap} is not installed` };
  const workspace = mkdtempSync(join(tmpdir(), 'svc-sandbox-probe-'));
  try {
    const args = [...sandboxArgs({ workspace, network, layout: hostLayout() }), '/bin/sh', '-c', 'echo sandbox-ok'];
    return await new Promise((resolve) => {
      const child = spawn(bwrap, args, { env: sandboxEnvironment(workspace), stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr.on('data', (d: Buffer) => (output += d.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.on('error', (err) => {
        clearTimeout(timer);
        resolve({ ok: false, reason: err.message });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        if (code === 0 && output.includes('sandbox-ok')) resolve({ ok: true });
        else resolve({ ok: false, reason: output.trim().slice(0, 300) || `exit code ${code}` });
      });
    });
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

const probes = new Map<string, Promise<{ ok: boolean; reason?: string }>>();

/**
 * probeSandbox once per process for a program and network setting: the entry begins it first
 * thing (a child process the start need not wait for while the server loads), and the Bash tool's
 * runner takes its answer when it is created.
 */
export function sandboxProbe(bwrap: string, network: boolean): Promise<{ ok: boolean; reason?: string }> {
  const key = `${bwrap}\0${network}`;
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = probeSandbox(bwrap, network);
    probes.set(key, probe);
  }
  return probe;
}

/**
 * `specwright kit <init|validate|test|publish> <dir>` — the kit author's command line. Run through
 * `bin.mjs`, which starts Node with --no-node-snapshot (the sandbox needs it). Every failure is one
 * line (problems one per line, `file[:line]: message`); exit codes: 0 ok (a publish finding its very
 * package in place too, so that "try again" below is safe), 1 failed, 2 usage error, 3 the service
 * could not take the request now (unreachable, no answer in time, 429 or 5xx): try again.
 * With --json, stdout holds exactly one line, a JSON object, whatever the outcome (for programs
 * that write kits in bulk); exit codes are the same.
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import {
  closeTestRuntime,
  formatProblem,
  formatTestReport,
  loadKitDirectory,
  publishKit,
  PublishError,
  scaffoldKit,
  ScaffoldError,
  testKitDirectory,
  type PublishProgress,
} from '../kit/index.ts';

const USAGE = `Usage: specwright kit <command> <dir> [options]
       specwright tool-server   (tools for coding assistants, over MCP: see its --help)

Commands:
  init <dir>        create a working kit in a new directory
  validate <dir>    check kit.json, templates, schemas, hooks and referenced files
  test <dir>        run the kit on each examples/*.json in the sandbox; report every output
  publish <dir>     upload the kit to a Specwright server

Options:
  --id <kit-id>     init: the kit id (default: from the directory name)
  --kits <dir>      test: where components of composite kits live (default: the kit's parent)
  --url <url>       publish: server URL          (or SPECWRIGHT_URL)
  --api-key <key>   publish: API key             (or SPECWRIGHT_API_KEY)
  --org <uuid>      publish: organization id     (or SPECWRIGHT_ORG)
  --json            print one JSON object on stdout instead of text
  -h, --help        show this help

Exit codes: 0 ok (also a publish of the very package that version already
holds: nothing changes), 1 failed (kit problems, failed examples, a refused
publish), 2 wrong usage, 3 the server could not take the request now
(unreachable, timed out, 429 or 5xx): try again later.
`;

/** The options each command takes; any other is a usage error, not silently ignored. */
const COMMAND_OPTIONS: Record<string, string[]> = {
  init: ['id', 'json'],
  validate: ['json'],
  test: ['kits', 'json'],
  publish: ['url', 'api-key', 'org', 'json'],
};

/**
 * Exit code of a publish the service could not take now — unreachable, no answer in time (either
 * way: the server's 408 is a TIMEOUT too), 429 or 5xx (its own or a proxy's) — which says nothing
 * about the kit: the same command may work later. A TLS failure is not one: retrying changes neither
 * the certificate nor the scheme.
 */
const EXIT_TRY_AGAIN = 3;
function tryAgainLater(error: PublishError): boolean {
  return error.code === 'UNREACHABLE' || error.code === 'TIMEOUT' || error.status === 429 || (error.status !== null && error.status >= 500);
}

class UsageError extends Error {}

type Output = { out: (line: string) => void; err: (line: string) => void; progress: (text: string, done?: boolean) => void };

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env, textIo: Output = consoleOutput()): Promise<number> {
  // Known before parsing succeeds, so that even a usage error answers in JSON.
  const json = argv.includes('--json');
  const io: Output = json ? { out: () => {}, err: textIo.err, progress: () => {} } : textIo;
  const answer = (value: Record<string, unknown>) => textIo.out(JSON.stringify(value));
  // Its own stdout is the protocol's: nothing else may be written there.
  if (argv[0] === 'tool-server') return toolServer(argv.slice(1), env, textIo);
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        id: { type: 'string' },
        kits: { type: 'string' },
        url: { type: 'string' },
        'api-key': { type: 'string' },
        org: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      // Still one JSON line on stdout: a program passing its user's flags along reads every answer.
      if (json) answer({ ok: true, usage: USAGE.trimEnd() });
      else textIo.out(USAGE.trimEnd());
      return 0;
    }
    refuseKeyShapedArguments(positionals);
    const [group, command, dir, ...extra] = positionals;
    if (group !== 'kit') throw new UsageError(group === undefined ? 'missing command' : `unknown command "${group}"; try "specwright kit --help"`);
    if (command === undefined) throw new UsageError('missing kit command (init, validate, test or publish)');
    // An empty argument is an unset variable (`kit init "$DIR"`), never "this directory".
    if (dir === undefined || dir === '') throw new UsageError(`"kit ${command}" needs a kit directory`);
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
    const allowed = COMMAND_OPTIONS[command];
    if (allowed === undefined) throw new UsageError(`unknown kit command "${command}" (init, validate, test or publish)`);
    // `kit validate --id x` or `kit test --url …` would otherwise do something other than asked, silently.
    const stray = Object.keys(values).find((name) => name !== 'help' && !allowed.includes(name));
    if (stray !== undefined) throw new UsageError(`--${stray} is not an option of "kit ${command}"`);
    // As for the kit directory: `--kits "$KITS"` with the variable unset would look for components in the current directory.
    if (values.kits === '') throw new UsageError('--kits needs a directory');
    const reply = json ? answer : undefined;
    switch (command) {
      case 'init':
        return await init(dir, values.id, io, reply);
      case 'validate':
        return await validate(dir, io, reply);
      case 'test':
        return await test(dir, values.kits, io, reply);
      default:
        return await publish(dir, {
          url: values.url ?? env.SPECWRIGHT_URL,
          apiKey: values['api-key'] ?? env.SPECWRIGHT_API_KEY,
          orgId: values.org ?? env.SPECWRIGHT_ORG,
        }, io, reply);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      // Node's own parse errors can span lines (an option missing its value); ours are one line.
      const message = (error as Error).message.replace(/\s*\n\s*/g, ' ');
      io.err(`specwright: ${message}`);
      io.err('Run "specwright kit --help" for usage.');
      if (json) answer({ ok: false, error: { code: 'USAGE', message } });
      return 2;
    }
    if (error instanceof ScaffoldError || error instanceof PublishError) {
      if (json) answer({ ok: false, error: { code: error instanceof ScaffoldError ? 'SCAFFOLD' : error.code, message: error.message } });
      else io.err(`specwright: ${error.message}`);
      return 1;
    }
    const message = String((error as Error)?.message ?? error).split('\n')[0];
    if (json) answer({ ok: false, error: { code: 'INTERNAL', message } });
    else io.err(`specwright: unexpected error: ${message}`);
    return 1;
  } finally {
    closeTestRuntime();
  }
}

/**
 * `specwright tool-server`: the tool server (MCP) for coding assistants, on stdin and stdout, until
 * the assistant closes stdin. SPECWRIGHT_URL and SPECWRIGHT_API_KEY come from the environment only
 * (an argument shows in every process list). Exit 2 when either is missing or unusable, 1 when the
 * connection failed (a message over 10 MiB) before stdin closed.
 */
async function toolServer(argv: string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  const refuse = (message: string) => {
    io.err(`specwright tool-server: ${message}`);
    return 2;
  };
  if (argv.some((argument) => argument === '--help' || argument === '-h')) {
    io.err(TOOL_SERVER_USAGE.trimEnd());
    return 0;
  }
  if (argv.length > 0) return refuse(`takes no arguments (got ${looksLikeApiKey(argv[0]!) ? 'an argument that looks like an API key, not shown' : `"${argv[0]}"`}); ${TOOL_SERVER_ENVIRONMENT}`);
  // Loaded here: the kit commands have no use for the protocol's library.
  const { serveToolsOverStdio, toolServerMisconfiguration } = await import('../tool-server/tool-server.ts');
  const misconfigured = toolServerMisconfiguration(env);
  if (misconfigured) return refuse(misconfigured);
  try {
    // 1 when the connection failed before the assistant closed stdin (stderr says why).
    return (await serveToolsOverStdio(env)) ? 0 : 1;
  } catch (error) {
    // The client's own checks (a URL that cannot work, a key with a control character) say what is wrong without the key.
    if (error instanceof TypeError) return refuse(error.message);
    throw error;
  }
}

const TOOL_SERVER_ENVIRONMENT = 'set SPECWRIGHT_URL and SPECWRIGHT_API_KEY in its environment';

const TOOL_SERVER_USAGE = `Usage: specwright tool-server

Serves Specwright's tools to a coding assistant over stdin and stdout (MCP).
Environment: SPECWRIGHT_URL (the service, e.g. http://127.0.0.1:3000) and
SPECWRIGHT_API_KEY (the key the tools call with). Arguments are refused.
`;

const POSITION_NAMES = ['the command', 'the kit command', 'the kit directory'];

/**
 * Usage errors quote what they refuse, so an API key pasted among the arguments (a forgotten
 * --api-key) would be printed to the terminal and to CI logs. A key-shaped argument is refused
 * first, naming its position, never its value.
 */
/** An argument holding an API key: `swk_…`, also after `=` or `:`, or a quote (`SPECWRIGHT_API_KEY=swk_…` written after the command, not before it). */
function looksLikeApiKey(argument: string): boolean {
  return /(?:^|[\s=:'"])swk_/i.test(argument);
}

function refuseKeyShapedArguments(positionals: string[]): void {
  const index = positionals.findIndex(looksLikeApiKey);
  if (index === -1) return;
  throw new UsageError(`${POSITION_NAMES[index] ?? 'an extra argument'} looks like an API key (not shown); pass the key with --api-key or SPECWRIGHT_API_KEY`);
}

type Answer = ((value: Record<string, unknown>) => void) | undefined;

async function init(dir: string, kitId: string | undefined, io: Output, answer: Answer): Promise<number> {
  const { kitId: id, files } = await scaffoldKit(dir, kitId === undefined ? {} : { kitId });
  answer?.({ ok: true, kitId: id, dir, files });
  for (const file of files) io.out(`created ${join(dir, file)}`);
  const shown = shellWord(dir);
  io.out(`Kit "${id}" is ready. Next: specwright kit validate ${shown} && specwright kit test ${shown}`);
  return 0;
}

/** `dir` as a shell reads it back: the "Next:" line is meant to be pasted. */
function shellWord(dir: string): string {
  const word = dir.startsWith('-') ? `./${dir}` : dir;
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

async function validate(dir: string, io: Output, answer: Answer): Promise<number> {
  const loaded = await loadKitDirectory(dir);
  if (answer) {
    answer(loaded.ok
      ? { ok: true, dir, kitRef: loaded.kit.ref, outputs: loaded.manifest.outputs.length, files: Object.keys(loaded.files), phases: loaded.manifest.phases, problems: [] }
      : { ok: false, dir, kitRef: loaded.kitRef ?? null, problems: loaded.problems });
    return loaded.ok ? 0 : 1;
  }
  if (!loaded.ok) {
    for (const problem of loaded.problems) io.err(formatProblem(problem));
    io.err(`${loaded.problems.length} problem${loaded.problems.length === 1 ? '' : 's'} in ${dir}`);
    return 1;
  }
  const { manifest } = loaded;
  io.out(`${loaded.kit.ref} is valid: ${manifest.outputs.length} output${manifest.outputs.length === 1 ? '' : 's'}, ${Object.keys(loaded.files).length} files, phases ${manifest.phases.join(' ')}`);
  return 0;
}

async function test(dir: string, kitsDir: string | undefined, io: Output, answer: Answer): Promise<number> {
  const report = await testKitDirectory(dir, kitsDir === undefined ? {} : { kitsDir });
  if (answer) {
    answer(report);
    return report.ok ? 0 : 1;
  }
  const lines = formatTestReport(report);
  const summary = lines.pop() as string;
  for (const line of lines) io.out(line);
  if (report.ok) io.out(summary);
  else io.err(summary);
  return report.ok ? 0 : 1;
}

async function publish(dir: string, target: { url?: string | undefined; apiKey?: string | undefined; orgId?: string | undefined }, io: Output, answer: Answer): Promise<number> {
  const missing = [
    target.url ? null : '--url (or SPECWRIGHT_URL)',
    target.apiKey ? null : '--api-key (or SPECWRIGHT_API_KEY)',
    target.orgId ? null : '--org (or SPECWRIGHT_ORG)',
  ].filter((name): name is string => name !== null);
  if (missing.length > 0) throw new UsageError(`publish needs ${missing.join(', ')}`);
  const onProgress = (progress: PublishProgress) => {
    if (progress.stage === 'validated') io.progress(`Validated ${progress.kitRef}: ${progress.files} files, ${formatBytes(progress.bytes)}`, true);
    else if (progress.stage === 'uploading') io.progress(`Uploading to ${new URL(target.url as string).origin}: ${Math.floor((progress.sentBytes / progress.totalBytes) * 100)}%`, progress.sentBytes === progress.totalBytes);
    else io.progress('Waiting for the server…', true);
  };
  try {
    const { alreadyPublished, ...published } = await publishKit({ dir, url: target.url as string, apiKey: target.apiKey as string, orgId: target.orgId as string, onProgress });
    answer?.({ ok: true, alreadyPublished, published });
    const shown = `${published.kitId}@${published.version} (${published.displayName}, id ${published.id}, ${published.status})`;
    // A retry of a publish whose answer was lost (a timeout, exit 3) finds its kit in place: a success.
    if (alreadyPublished) io.out(`Already published: ${shown} is this very package, published ${published.createdAt}; nothing changed`);
    else io.out(`Published ${shown}`);
    return 0;
  } catch (error) {
    if (!(error instanceof PublishError)) throw error;
    const exit = tryAgainLater(error) ? EXIT_TRY_AGAIN : 1;
    if (answer) {
      answer({ ok: false, error: { code: error.code, status: error.status, message: error.message }, problems: error.problems });
      return exit;
    }
    for (const problem of error.problems) io.err(formatProblem(problem));
    const code = error.code === 'LOCAL' ? '' : ` [${error.code}${error.status === null ? '' : ` ${error.status}`}]`;
    io.err(`specwright: publish failed: ${error.message}${code}`);
    return exit;
  }
}

function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KiB`;
}

type Stream = { isTTY?: boolean; write(text: string): unknown };

export function consoleOutput(stdout: Stream = process.stdout, stderr: Stream = process.stderr): Output {
  const tty = stderr.isTTY === true;
  // A progress line left open (an upload cut short) is closed before anything else is printed.
  let pending = false;
  const line = (stream: Stream, text: string) => {
    if (pending) stderr.write('\n');
    pending = false;
    stream.write(`${text}\n`);
  };
  return {
    out: (text) => line(stdout, text),
    err: (text) => line(stderr, text),
    // On a terminal, progress redraws one line; elsewhere (CI logs) only finished steps are printed.
    progress: (text, done = false) => {
      if (tty) {
        stderr.write(`\r\u001b[2K${text}${done ? '\n' : ''}`);
        pending = !done;
      } else if (done) stderr.write(`${text}\n`);
    },
  };
}

if (import.meta.main) {
  // Output piped into a reader that stops early (`| head`): what is left is dropped, not a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.exitCode = await main(process.argv.slice(2));
}

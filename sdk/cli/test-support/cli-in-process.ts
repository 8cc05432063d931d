import { main } from '../specwright.ts';

/**
 * Runs the CLI in this process, as `specwright <args>` with `env`: its exit code and the lines it
 * wrote to stdout (`out`) and stderr (`err`); of the progress line, only its final state.
 */
export async function cliInProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, env, { out: (line) => out.push(line), err: (line) => err.push(line), progress: (line, done) => done && err.push(line) });
  return { code, out, err };
}

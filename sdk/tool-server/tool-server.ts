import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createSpecwrightClient, type SpecwrightClientOptions } from '../client.ts';
import { registerSpecwrightTools } from './specwright-tools.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/**
 * The tool server (MCP) coding assistants use: Specwright's tools, each calling the service through
 * the typed client with the caller's API key. Connect it to a transport (`serveToolsOverStdio`).
 */
export function createToolServer(client: SpecwrightClientOptions & { apiKey: string }): McpServer {
  const server = new McpServer(
    { name: 'specwright', version },
    { instructions: 'Specwright turns a product idea into a specification and generated files. Find a project (list_projects) or create one, pick a kit (list_kits), run it (execute_kit), poll get_execution, then read its files with get_output.' },
  );
  registerSpecwrightTools(server, createSpecwrightClient(client), client.apiKey.trim());
  return server;
}

/** Why the tool server cannot start with this environment, or null when it can. */
export function toolServerMisconfiguration(env: NodeJS.ProcessEnv): string | null {
  const missing = [env.SPECWRIGHT_URL?.trim() ? null : 'SPECWRIGHT_URL', env.SPECWRIGHT_API_KEY?.trim() ? null : 'SPECWRIGHT_API_KEY'].filter((name) => name !== null);
  return missing.length === 0 ? null : `set ${missing.join(' and ')} in the environment the tool server starts with (the API key is never taken as an argument)`;
}

/**
 * Serves the tools over stdin and stdout (how assistants start a local tool server) until stdin
 * ends or the server is closed. The client options are checked first: a URL that cannot work, or a
 * key that cannot travel in a header, throws a TypeError saying so (without the key). Resolves true
 * when the assistant closed stdin, false when the connection failed first.
 */
export async function serveToolsOverStdio(env: NodeJS.ProcessEnv): Promise<boolean> {
  const { stdin, stdout, stderr } = process;
  const server = createToolServer({ url: env.SPECWRIGHT_URL!.trim(), apiKey: env.SPECWRIGHT_API_KEY! });
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
  });
  // stderr is the assistant's log of the server. Unset, a message it could not read (a line that is
  // not JSON, one over the transport's 10 MiB, which also ends the connection) went unreported, and
  // the server exited 0 as if the assistant had closed stdin.
  server.server.onerror = (error) => void stderr.write(`specwright tool-server: ${firstLineOf(error)}\n`);
  await server.connect(new StdioServerTransport(stdin, stdout));
  // The assistant closes its end when it is done with the server.
  let stdinEnded = false;
  stdin.once('end', () => {
    stdinEnded = true;
    void server.close();
  });
  await closed;
  return stdinEnded;
}

/** An error in one line: the transport's can quote a whole message the assistant sent. */
function firstLineOf(error: Error): string {
  const line = error.message.split('\n')[0]!;
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
}

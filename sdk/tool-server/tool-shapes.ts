import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

/** What the tool modules share: the project id input, the read-only annotations, and how a tool calls the client. */

export const projectId = z.string().describe('A project id (list_projects)');

export const reads = { readOnlyHint: true, openWorldHint: false } as const;

/** What a tool's call is given: the request's signal, aborted when the assistant cancels it or the connection closes. */
export type ToolRequest = { signal: AbortSignal };

/** Runs one call of the client for a tool and answers the tool's result (see registerSpecwrightTools). */
export type Calling = <Data>(request: ToolRequest, call: (options: ToolRequest) => Promise<Data>) => Promise<CallToolResult>;

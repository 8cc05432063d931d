import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SpecwrightTransportError, serviceErrorOf } from '../client-errors.ts';

/**
 * A call's answer as a tool result: the service's data, as JSON text and, when it is a JSON object,
 * as structured content too. MCP allows only an object there: the client refuses a whole result
 * whose structured content is an array or null (what something other than the service could
 * answer), so the assistant would get a protocol error instead of the data.
 */
export function answered(data: unknown): CallToolResult {
  const content: CallToolResult['content'] = [{ type: 'text', text: JSON.stringify(data, null, 2) ?? 'null' }];
  return isJsonObject(data) ? { content, structuredContent: data } : { content };
}

const isJsonObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A generated file as a tool result: its metadata as JSON, then its content as it is (escaped inside
 * JSON, a YAML or SQL file reads as one long string). Text only, the content once: as structured
 * content too, a client that hands the model the structured content in place of the text (Claude
 * Code does) showed the file as one escaped string again, and the content went twice over the wire:
 * an output of control characters near the service's 1 MiB made a 12 MB message, over the 10 MiB an
 * MCP client reads, and the assistant lost its connection. An answer that is not a file (something
 * other than the service at the URL) is answered as any other.
 */
export function answeredFile(file: unknown): CallToolResult {
  if (!isJsonObject(file) || typeof file.content !== 'string') return answered(file);
  const { content, ...about } = file;
  return { content: [{ type: 'text', text: JSON.stringify(about, null, 2) }, { type: 'text', text: content }] };
}

/**
 * A failed call as a tool result the assistant can act on: the service's code and message (with a
 * VALIDATION_ERROR's fields, a RATE_LIMITED answer's wait and the request id to quote), or why the
 * service could not be reached. Never the error's stack, nor anything of the request it sent; and
 * `secret` (the API key) is blanked from what an answer says: the service never quotes it, but
 * whatever answers at the URL in its place might.
 */
export function failed(error: unknown, secret: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: blanked(whyItFailed(error), secret) }] };
}

/**
 * `text` with `secret` blanked. A key of the service's (60 characters) is blanked wherever it
 * appears; one of a few characters, which no service takes, only where it stands on its own: blanked
 * anywhere, `e` made `Th[redacted] API k[redacted]y…` of the refusal and garbled its request id.
 */
function blanked(text: string, secret: string): string {
  if (secret === '') return text;
  if (secret.length >= 16) return text.replaceAll(secret, '[redacted]');
  const escaped = secret.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  return text.replace(new RegExp(`(?<![A-Za-z0-9_-])${escaped}(?![A-Za-z0-9_-])`, 'g'), '[redacted]');
}

function whyItFailed(error: unknown): string {
  const service = serviceErrorOf(error);
  if (service) {
    const lines = [`${service.code}: ${service.message}`];
    for (const { field, issue } of service.issues) lines.push(`- ${field}: ${issue}`);
    if (service.retryAfterSeconds !== undefined) lines.push(`Try again in ${service.retryAfterSeconds} s.`);
    if (service.requestId) lines.push(`Request id: ${service.requestId}`);
    return lines.join('\n');
  }
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof SpecwrightTransportError) return `The Specwright service did not answer this call: ${cause.message}`;
  return `The call failed before the service answered: ${error instanceof Error ? error.message : String(error)}`;
}

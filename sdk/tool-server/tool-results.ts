import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SpecwrightTransportError, serviceErrorOf } from '../client-errors.ts';

/** A call's answer as a tool result: the service's data, as JSON text and as structured content. */
export function answered(data: object): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(data, null, 2) }], structuredContent: data as Record<string, unknown> };
}

/**
 * A failed call as a tool result the assistant can act on: the service's code and message (with a
 * VALIDATION_ERROR's fields, a RATE_LIMITED answer's wait and the request id to quote), or why the
 * service could not be reached. Never the error's stack, nor anything of the request it sent: the
 * API key stays in the process.
 */
export function failed(error: unknown): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: whyItFailed(error) }] };
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

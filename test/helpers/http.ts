import { recordedResponses } from './response-log.ts';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** Sent as is: text, or bytes (which need not be valid UTF-8). */
  rawBody?: string | Uint8Array;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** One HTTP call to the running service, returning status, headers and the parsed body. */
export async function call<T = any>(baseUrl: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method: options.method ?? (body ? 'POST' : 'GET'), headers, body });
  const text = await response.text();
  recordedResponses.push({ path, text });
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

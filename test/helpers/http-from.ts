import { request } from 'node:http';
import { recordedResponses } from './response-log.ts';
import type { ApiResponse } from './http.ts';

/**
 * A JSON call made from a chosen loopback address (127.0.0.2, 127.0.0.3 …), so a test can be
 * several clients at once: the service sees each as its own client address.
 */
export function callFrom<T = any>(localAddress: string, baseUrl: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
  const url = new URL(path, baseUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          recordedResponses.push({ path, text });
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') responseHeaders.set(name, value);
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: responseHeaders, body: parsed as T, text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

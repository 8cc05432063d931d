import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { call, type ApiResponse, type RequestOptions } from './http.ts';
import type { TestApp } from './test-app.ts';

const ajv = new Ajv2020.default({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * Calls Variant A (/api/basic) as `apiKey` and holds every answer to /api/basic/openapi.json: its
 * status one the document lists for the operation, its body valid against that status's schema (no
 * body where the document promises none).
 */
export async function basicSurface(app: TestApp, apiKey: string) {
  const document = (await call(app.url, '/api/basic/openapi.json')).body;
  async function basic(method: string, template: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const response = await call(app.url, `/api/basic${path}`, { method, apiKey, ...options });
    const documented = document.paths[template]?.[method.toLowerCase()]?.responses?.[String(response.status)];
    expect(documented, `${method} ${template} answered ${response.status}: ${response.text}`).toBeDefined();
    const schema = documented.content?.['application/json']?.schema;
    if (schema) {
      const validate = ajv.compile({ ...schema, components: document.components });
      expect(validate(response.body), `${method} ${template} ${response.status}: ${JSON.stringify(validate.errors)}`).toBe(true);
    } else {
      expect(response.text).toBe('');
    }
    return response;
  }
  return { document, basic };
}

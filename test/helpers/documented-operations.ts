/** A uuid no row has: it fills a documented path's parameters, so that a call reaches its operation. */
export const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/** One operation of `/api/openapi.json`: its method (upper case), its path template, and a path to call it at. */
export interface DocumentedOperation<Operation> {
  method: string;
  template: string;
  /** The template under `/api`, each path parameter filled with UNKNOWN_UUID. */
  path: string;
  operation: Operation;
}

/** Every operation the document lists, for tests that hold each to what the document says of it. */
export function documentedOperations<Operation = unknown>(document: { paths: Record<string, Record<string, Operation>> }): Array<DocumentedOperation<Operation>> {
  return Object.entries(document.paths).flatMap(([template, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({ method: method.toUpperCase(), template, path: `/api${template.replace(/\{\w+\}/g, UNKNOWN_UUID)}`, operation })),
  );
}

/** The API's version: the OpenAPI info block and the health report carry it. */
export const SERVICE_VERSION = '1.0.0';

export { createSpecwrightClient, errorCodeOf, type SpecwrightClient, type SpecwrightClientOptions, type AppRouter } from './client.ts';

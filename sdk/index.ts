export {
  createSpecwrightClient,
  type SpecwrightClient,
  type SpecwrightClientOptions,
  type RouterInputs,
  type RouterOutputs,
  type AppRouter,
} from './client.ts';
export { errorCodeOf, serviceErrorOf, SpecwrightTransportError, type SpecwrightErrorCode, type SpecwrightServiceError } from './client-errors.ts';

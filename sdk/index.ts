export {
  createSpecwrightClient,
  type SpecwrightClient,
  type SpecwrightClientOptions,
  type SpecwrightErrorCode,
  type RouterInputs,
  type RouterOutputs,
  type AppRouter,
} from './client.ts';
export { errorCodeOf, serviceErrorOf, SpecwrightTransportError, type SpecwrightServiceError } from './client-errors.ts';

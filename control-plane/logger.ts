import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Paths pino blanks before a line is written. Secrets must never reach a log line, whatever
 * object they travel in, so the list covers headers, bodies and the names our services use.
 */
export const redactedPaths = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  // The address of the page a request came from may carry a token (an invitation link).
  'req.headers.referer',
  'res.headers["set-cookie"]',
  '*.apiKey',
  '*.password',
  '*.passwordHash',
  '*.token',
  '*.accessToken',
  '*.secret',
  '*.credentials',
  '*.keyHash',
  'apiKey',
  'password',
  'token',
  'secret',
  'credentials',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'specwright' },
      redact: { paths: redactedPaths, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

export type { Logger };

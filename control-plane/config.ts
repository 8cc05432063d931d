import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0'])
  .optional()
  .transform((value) => value === 'true' || value === '1');

/** `a, b,,c` → `['a', 'b', 'c']`: the entries of a comma-separated variable, blanks dropped. */
const commaSeparated = (value: string) => value.split(',').map((entry) => entry.trim()).filter(Boolean);

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
const MAX_PROXY_HOPS = 10;

/**
 * Which proxies' X-Forwarded-For express believes (its `trust proxy`): none by default; a hop count;
 * or addresses, CIDR ranges and the names loopback / linklocal / uniquelocal. "true" (every hop) is
 * refused: then any client could name its own address and escape its rate limits.
 */
const trustProxy = z
  .string()
  .optional()
  .transform((value, ctx): false | number | string[] => {
    const text = value?.trim() ?? '';
    if (text === '' || text === 'false') return false;
    if (/^\d+$/.test(text)) {
      if (Number(text) <= MAX_PROXY_HOPS) return Number(text);
      ctx.addIssue({ code: 'custom', message: `a hop count is at most ${MAX_PROXY_HOPS}: more than the proxies in front of the service believes what a client writes itself, as "true" would` });
      return z.NEVER;
    }
    const entries = commaSeparated(text);
    const wrong = entries.filter((entry) => !PROXY_NAMES.includes(entry) && !ipaddr.isValid(entry) && !ipaddr.isValidCIDR(entry));
    if (text === 'true' || wrong.length > 0) {
      ctx.addIssue({ code: 'custom', message: `name the proxies (addresses, CIDR ranges, ${PROXY_NAMES.join(', ')}) or a hop count${wrong.length > 0 ? `; not understood: ${wrong.join(', ')}` : ''}` });
      return z.NEVER;
    }
    return entries;
  });

/** Decimal digits only: `0x10`, `1e3` and `2.5` are not what an operator meant by a count. */
const wholeNumber = (min: number, max: number, tooLarge = `must be at most ${max}`) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number (decimal digits)')
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, tooLarge));
const positiveInt = (fallback: number) => wholeNumber(1, Number.MAX_SAFE_INTEGER).default(fallback);
/** What setTimeout can wait: Node fires a longer timer after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647;
/** DATABASE_CONNECT_TIMEOUT_MS's default (also a pool's made without configuration). */
export const DEFAULT_DATABASE_CONNECT_TIMEOUT_MS = 10_000;
const milliseconds = (fallback: number) => wholeNumber(1, MAX_TIMER_MS).default(fallback);
/** Time shutdown keeps, after SHUTDOWN_GRACE_MS, to close connections and stop the embedded database. */
export const SHUTDOWN_CLOSE_MARGIN_MS = 5_000;
/**
 * Shutdown's own timer waits the grace period plus that margin: a grace period so long that the sum
 * no longer fits a timer would make every shutdown give up after 1 ms.
 */
const MAX_SHUTDOWN_GRACE_MS = MAX_TIMER_MS - SHUTDOWN_CLOSE_MARGIN_MS;
const shutdownGrace = wholeNumber(1, MAX_SHUTDOWN_GRACE_MS, `must be at most ${MAX_SHUTDOWN_GRACE_MS}: shutdown adds ${SHUTDOWN_CLOSE_MARGIN_MS} ms to close connections, and a timer waits at most ${MAX_TIMER_MS} ms`).default(15_000);

/** The JWS algorithms jose 6 verifies (names are case-sensitive). */
const JWS_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'ML-DSA-44', 'ML-DSA-65', 'ML-DSA-87'];

/**
 * The bearer tokens' algorithm allow-list; `none` is always dropped. A name jose does not know (a
 * typo, `hs256`) or a list left empty would refuse every token, each with a bare 401: refused here.
 */
const jwtAlgorithms = z
  .string()
  .optional()
  .transform((value, ctx): string[] | undefined => {
    if (value === undefined) return undefined;
    const algorithms = commaSeparated(value).filter((alg) => alg !== 'none');
    const unknown = algorithms.filter((alg) => !JWS_ALGORITHMS.includes(alg));
    const problem =
      unknown.length > 0 ? `not a JWS algorithm: ${unknown.join(', ')} (one of ${JWS_ALGORITHMS.join(', ')})`
      : algorithms.length === 0 ? 'names no algorithm (none is never accepted), so every bearer token would be refused'
      : undefined;
    if (problem === undefined) return algorithms;
    ctx.addIssue({ code: 'custom', message: problem });
    return z.NEVER;
  });

/**
 * JWT_MAX_TOKEN_AGE_SECONDS: how old (by its `iat`) an identity provider's token may be, whatever its
 * `exp` says, so a leaked token with an `exp` years ahead stops working within a day. 24 hours is the
 * longest access-token lifetime common IdPs issue by default (Auth0 APIs; Okta, Entra ID, Google and
 * Keycloak issue 1 hour or less), so no ordinary token is refused. A value under a minute is most
 * likely minutes or hours written as seconds; past 30 days the limit bounds little a leak would notice.
 */
export const DEFAULT_JWT_MAX_TOKEN_AGE_SECONDS = 24 * 60 * 60;
const MIN_JWT_MAX_TOKEN_AGE_SECONDS = 60;
const MAX_JWT_MAX_TOKEN_AGE_SECONDS = 30 * 24 * 60 * 60;
const jwtMaxTokenAge = z
  .string()
  .trim()
  .regex(/^\d+$/, 'must be a whole number of seconds (decimal digits), like 86400 for 24 hours')
  .transform(Number)
  .pipe(
    z
      .number()
      .min(MIN_JWT_MAX_TOKEN_AGE_SECONDS, `must be at least ${MIN_JWT_MAX_TOKEN_AGE_SECONDS} seconds: the value is in seconds, and a smaller one most likely meant minutes or hours`)
      .max(MAX_JWT_MAX_TOKEN_AGE_SECONDS, `must be at most ${MAX_JWT_MAX_TOKEN_AGE_SECONDS} seconds (30 days): a longer limit would let a leaked bearer token work for months`),
  )
  .default(DEFAULT_JWT_MAX_TOKEN_AGE_SECONDS);

/**
 * URL prefixes (comma-separated) platform kits may push to. Each must be an http(s) URL: a remote
 * is matched on its origin, then its path. Entries are named by position, not echoed: one may carry
 * a token.
 */
/**
 * The web origins whose scripts may call the API from a browser (CORS): none by default, `*` for
 * any, or a list of origins exactly as browsers send them (`https://app.example.com`,
 * `http://localhost:5173`: scheme, host and port, no path). Browsers compare origins as strings, so
 * an entry that is not one (`https://App.example.com/`) would never match: it is refused, with the
 * form that would.
 */
const corsAllowedOrigins = z
  .string()
  .optional()
  .transform((value, ctx): '*' | string[] => {
    const entries = commaSeparated(value ?? '');
    if (entries.length === 1 && entries[0] === '*') return '*';
    const problems = entries.flatMap((entry) => {
      if (entry === '*') return ['"*" stands alone: it already allows every origin'];
      const url = URL.parse(entry);
      if (!url || !/^https?:$/.test(url.protocol)) return [`"${entry}" is not an http(s) origin (like https://app.example.com)`];
      if (url.origin !== entry) return [`"${entry}" is not an origin as browsers send it: write ${url.origin}`];
      return [];
    });
    if (problems.length > 0) {
      ctx.addIssue({ code: 'custom', message: problems.join('; ') });
      return z.NEVER;
    }
    return entries;
  });

const gitRemotePrefixes = z
  .string()
  .optional()
  .transform((value, ctx): string[] => {
    const prefixes = commaSeparated(value ?? '');
    const wrong = prefixes.flatMap((prefix, index) => (/^https?:$/.test(URL.parse(prefix)?.protocol ?? '') ? [] : [index + 1]));
    if (wrong.length > 0) {
      ctx.addIssue({ code: 'custom', message: `each entry must be an http(s) URL prefix, like https://git.example.com/team/; not one: entry ${wrong.join(', ')}` });
      return z.NEVER;
    }
    return prefixes;
  });

/** A value that must be used as written, refused when it begins or ends with white space (an env file's stray space or \r). */
const withoutSurroundingSpace = (consequence: string) =>
  z.string().refine((value) => value.trim() === value, `begins or ends with white space, most likely a stray character from where it was set: remove it (${consequence})`);

/**
 * pg reads any URL, whatever its scheme: `localhost:5432/specwright` (the scheme left out) connected
 * to the default server, user and database instead of the ones meant.
 */
const databaseUrl = z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// or postgresql:// URL' }).optional();

export const AI_PROVIDERS = ['offline', 'openai-compatible', 'anthropic'] as const;
/** The most tokens an agent execution's budget may allow (a request's or the default). */
export const MAX_AGENT_TOKENS = 100_000_000;
/** A price or budget in US dollars: a plain decimal (`0.15`, `3`), never negative. */
const dollars = z
  .string()
  .trim()
  .regex(/^\d{1,6}(\.\d{1,9})?$/, 'must be a decimal number of US dollars, like 0.15 or 3 (at most 999999.999999999)')
  .transform(Number);

/**
 * The provider's address, to which the SDK appends its paths (`/chat/completions`, `/messages`) as
 * text: a query or fragment would swallow them, and fetch refuses a URL with a user name or password,
 * so every call would fail. Refused by what is wrong, never echoed: a userinfo may hold a secret.
 */
const aiBaseUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .refine((value) => {
    const url = URL.parse(value);
    // Not a URL at all: z.url has said so already.
    return !url || (url.username === '' && url.password === '' && url.search === '' && url.hash === '' && !value.includes('?') && !value.includes('#'));
  }, 'must be a plain http(s) URL, like https://api.openai.com/v1: no user name or password, query or fragment (the provider\'s paths are appended to it, and the key goes in AI_API_KEY)')
  .optional();

/** Every environment variable the service reads. The README's configuration table mirrors this. */
const environmentSchema = z.object({
  PORT: wholeNumber(0, 65_535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  TRUST_PROXY: trustProxy,
  DATABASE_URL: databaseUrl,
  APP_DATABASE_URL: databaseUrl,
  DATA_DIR: withoutSurroundingSpace('a path that differs by it would start a fresh database away from the data').default('./.specwright'),
  SERVER_SECRET: z.string().min(32, 'SERVER_SECRET must be at least 32 characters').optional(),
  JWT_SECRET: z.string().min(32, 'JWT_SECRET must be at least 32 characters').optional(),
  JWT_JWKS_URL: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
  JWT_ISSUER: withoutSurroundingSpace("no identity provider's token would name it, so every one would be refused").optional(),
  JWT_AUDIENCE: withoutSurroundingSpace("no identity provider's token would name it, so every one would be refused").optional(),
  JWT_ALGORITHMS: jwtAlgorithms,
  JWT_MAX_TOKEN_AGE_SECONDS: jwtMaxTokenAge,
  E2E_TEST_MODE: booleanFlag,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  RATE_LIMIT_GENERAL_PER_MINUTE: positiveInt(100),
  RATE_LIMIT_AGENT_PER_MINUTE: positiveInt(10),
  RATE_LIMIT_COMPILATION_PER_MINUTE: positiveInt(5),
  RATE_LIMIT_DISCOVERY_CHAT_PER_MINUTE: positiveInt(30),
  RATE_LIMIT_PER_HOUR: wholeNumber(1, Number.MAX_SAFE_INTEGER).optional(),
  LOGIN_FAILURES_PER_EMAIL_AND_ADDRESS: positiveInt(5),
  LOGIN_FAILURES_PER_ADDRESS: positiveInt(20),
  LOGIN_FAILURES_PER_EMAIL: positiveInt(25),
  LOGIN_FAILURE_WINDOW_SECONDS: positiveInt(15 * 60),
  BODY_LIMIT_BYTES: positiveInt(1024 * 1024),
  UPLOAD_LIMIT_BYTES: positiveInt(10 * 1024 * 1024),
  // Each running job holds a connection of the worker's pool (concurrency + 2): more than this would
  // ask the database for more connections than it allows (PostgreSQL's default is 100).
  WORKER_CONCURRENCY: wholeNumber(1, 50).default(2),
  WORKER_HEARTBEAT_MS: milliseconds(10_000),
  KIT_GIT_ALLOWED_REMOTES: gitRemotePrefixes,
  CORS_ALLOWED_ORIGINS: corsAllowedOrigins,
  WORKER_STALE_AFTER_MS: milliseconds(30_000),
  SHUTDOWN_GRACE_MS: shutdownGrace,
  HTTP_HEADERS_TIMEOUT_MS: milliseconds(20_000),
  HTTP_REQUEST_TIMEOUT_MS: milliseconds(120_000),
  HTTP_IDLE_TIMEOUT_MS: milliseconds(70_000),
  DATABASE_CONNECT_TIMEOUT_MS: milliseconds(DEFAULT_DATABASE_CONNECT_TIMEOUT_MS),
  DATABASE_STATEMENT_TIMEOUT_MS: milliseconds(30_000),
  AI_PROVIDER: z.enum(AI_PROVIDERS).optional(),
  AI_MODEL: withoutSurroundingSpace('the provider would know no model by that name').optional(),
  AI_BASE_URL: aiBaseUrl,
  AI_API_KEY: withoutSurroundingSpace('the provider would refuse every call').optional(),
  AI_PRICE_INPUT_PER_MILLION_USD: dollars.default(0),
  AI_PRICE_OUTPUT_PER_MILLION_USD: dollars.default(0),
  AI_MAX_OUTPUT_TOKENS: wholeNumber(1, 1_000_000).default(16_384),
  AI_CALL_TIMEOUT_MS: milliseconds(120_000),
  AGENT_DEFAULT_MAX_TOKENS: wholeNumber(1, MAX_AGENT_TOKENS).default(200_000),
  AGENT_DEFAULT_MAX_COST_USD: dollars.default(5),
}).superRefine((e, ctx) => {
  // A worker beats every WORKER_HEARTBEAT_MS and is dead after WORKER_STALE_AFTER_MS of silence:
  // without room for a late beat or two, a live worker's executions would be failed under it.
  if (e.WORKER_HEARTBEAT_MS * 2 > e.WORKER_STALE_AFTER_MS) {
    ctx.addIssue({ code: 'custom', path: ['WORKER_HEARTBEAT_MS'], message: `must be at most half of WORKER_STALE_AFTER_MS (${e.WORKER_STALE_AFTER_MS}), or a live worker reads as dead` });
  }
  // A real provider's settings with no provider named would have agents draft offline, quietly.
  const realProviderSettings = (['AI_MODEL', 'AI_API_KEY', 'AI_BASE_URL'] as const).filter((name) => e[name] !== undefined);
  if (e.AI_PROVIDER === undefined && realProviderSettings.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['AI_PROVIDER'], message: `is unset, so agents would draft offline although ${realProviderSettings.join(', ')} ${realProviderSettings.length > 1 ? 'are' : 'is'} set: name the provider (openai-compatible or anthropic), or offline to draft without a model` });
  }
  // A real provider needs its model and key (and an OpenAI-compatible one its address); the offline one needs none.
  if (e.AI_PROVIDER !== undefined && e.AI_PROVIDER !== 'offline') {
    const missing = ['AI_MODEL', 'AI_API_KEY', ...(e.AI_PROVIDER === 'openai-compatible' ? ['AI_BASE_URL'] : [])].filter((name) => !e[name as keyof typeof e]);
    for (const name of missing) ctx.addIssue({ code: 'custom', path: [name], message: `is required when AI_PROVIDER is ${e.AI_PROVIDER}` });
  }
});

export type RateLimitClass = 'general' | 'agent' | 'compilation' | 'discoveryChat';

export interface Config {
  port: number;
  host: string;
  /** express's `trust proxy`: which proxies may tell the client's address (X-Forwarded-For). */
  trustProxy: false | number | string[];
  databaseUrl: string | undefined;
  appDatabaseUrl: string | undefined;
  dataDir: string;
  serverSecret: string | undefined;
  jwt: {
    secret: string | undefined;
    jwksUrl: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
    algorithms: string[];
    /** The oldest (by `iat`) an identity provider's token may be; one without `iat` is refused. */
    maxTokenAgeSeconds: number;
  };
  e2eTestMode: boolean;
  logLevel: string;
  rateLimits: Record<RateLimitClass, number> & { perHour: number | undefined };
  /** Failed sign-ins allowed per window before POST /auth/login answers RATE_LIMITED. */
  loginLimits: { perEmailAndAddress: number; perAddress: number; perEmail: number; windowSeconds: number };
  bodyLimitBytes: number;
  uploadLimitBytes: number;
  workerConcurrency: number;
  workerHeartbeatMs: number;
  /** Web origins whose scripts may call the API from a browser: a list, `*` for any; empty: none. */
  corsAllowedOrigins: '*' | string[];
  /** URL prefixes platform kits may push to; empty: any https URL. */
  kitGitAllowedRemotes: string[];
  /** A worker silent for this long is dead: its executions are failed, health reports it down. */
  workerStaleAfterMs: number;
  shutdownGraceMs: number;
  /** How long a client may take to send its headers, its whole request, or to move any data at all. */
  httpTimeouts: { headersMs: number; requestMs: number; idleMs: number };
  /** How long a database connection may take to be had, opened or freed (DATABASE_CONNECT_TIMEOUT_MS). */
  databaseConnectTimeoutMs: number;
  /** How long a request's statement may take before it is cancelled or given up (DATABASE_STATEMENT_TIMEOUT_MS). */
  databaseStatementTimeoutMs: number;
  ai: AiConfig;
}

/** Where agents' drafts come from, what they cost, and the budget an execution has unless it names one. */
export interface AiConfig {
  provider: (typeof AI_PROVIDERS)[number];
  /** The provider's model name; the offline provider has its own. */
  model: string | undefined;
  baseUrl: string | undefined;
  /** Secret: never logged, never returned. */
  apiKey: string | undefined;
  prices: { inputPerMillionUsd: number; outputPerMillionUsd: number };
  /** The most tokens one call may write, whatever the budget leaves. */
  maxOutputTokens: number;
  callTimeoutMs: number;
  defaultBudget: { maxTokens: number; maxCostUsd: number };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Where an empty value most likely means a secret, address or path that failed to arrive: refused
 * rather than read as unset (an empty DATABASE_URL must not quietly start an embedded database, nor
 * an empty DATA_DIR a fresh one in the working directory).
 */
const MUST_NOT_BE_EMPTY = ['DATABASE_URL', 'APP_DATABASE_URL', 'DATA_DIR', 'SERVER_SECRET', 'JWT_SECRET', 'JWT_JWKS_URL', 'AI_API_KEY'];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const empty = Object.keys(env).filter((name) => env[name]?.trim() === '');
  // Any other empty variable (PORT= in a compose file) is an unset one: its default applies.
  const set = Object.fromEntries(Object.entries(env).filter(([name]) => !empty.includes(name)));
  const parsed = environmentSchema.safeParse(set);
  const emptyProblems = empty.filter((name) => MUST_NOT_BE_EMPTY.includes(name)).map((name) => `${name}: is set but empty; give it a value or unset it`);
  if (!parsed.success || emptyProblems.length > 0) {
    const problems = [...emptyProblems, ...(parsed.error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`)];
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const e = parsed.data;
  const defaultAlgorithms = e.JWT_JWKS_URL ? ['RS256', 'ES256', 'EdDSA'] : ['HS256'];
  return {
    port: e.PORT,
    host: e.HOST,
    trustProxy: e.TRUST_PROXY,
    databaseUrl: e.DATABASE_URL,
    appDatabaseUrl: e.APP_DATABASE_URL,
    dataDir: e.DATA_DIR,
    serverSecret: e.SERVER_SECRET,
    jwt: {
      secret: e.JWT_SECRET,
      jwksUrl: e.JWT_JWKS_URL,
      issuer: e.JWT_ISSUER,
      audience: e.JWT_AUDIENCE,
      algorithms: e.JWT_ALGORITHMS ?? defaultAlgorithms,
      maxTokenAgeSeconds: e.JWT_MAX_TOKEN_AGE_SECONDS,
    },
    e2eTestMode: e.E2E_TEST_MODE,
    logLevel: e.LOG_LEVEL,
    rateLimits: {
      general: e.RATE_LIMIT_GENERAL_PER_MINUTE,
      agent: e.RATE_LIMIT_AGENT_PER_MINUTE,
      compilation: e.RATE_LIMIT_COMPILATION_PER_MINUTE,
      discoveryChat: e.RATE_LIMIT_DISCOVERY_CHAT_PER_MINUTE,
      perHour: e.RATE_LIMIT_PER_HOUR,
    },
    loginLimits: {
      perEmailAndAddress: e.LOGIN_FAILURES_PER_EMAIL_AND_ADDRESS,
      perAddress: e.LOGIN_FAILURES_PER_ADDRESS,
      perEmail: e.LOGIN_FAILURES_PER_EMAIL,
      windowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    uploadLimitBytes: e.UPLOAD_LIMIT_BYTES,
    workerConcurrency: e.WORKER_CONCURRENCY,
    workerHeartbeatMs: e.WORKER_HEARTBEAT_MS,
    corsAllowedOrigins: e.CORS_ALLOWED_ORIGINS,
    kitGitAllowedRemotes: e.KIT_GIT_ALLOWED_REMOTES,
    workerStaleAfterMs: e.WORKER_STALE_AFTER_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    httpTimeouts: { headersMs: e.HTTP_HEADERS_TIMEOUT_MS, requestMs: e.HTTP_REQUEST_TIMEOUT_MS, idleMs: e.HTTP_IDLE_TIMEOUT_MS },
    databaseConnectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    ai: {
      provider: e.AI_PROVIDER ?? 'offline',
      model: e.AI_MODEL,
      baseUrl: e.AI_BASE_URL,
      apiKey: e.AI_API_KEY,
      prices: { inputPerMillionUsd: e.AI_PRICE_INPUT_PER_MILLION_USD, outputPerMillionUsd: e.AI_PRICE_OUTPUT_PER_MILLION_USD },
      maxOutputTokens: e.AI_MAX_OUTPUT_TOKENS,
      callTimeoutMs: e.AI_CALL_TIMEOUT_MS,
      defaultBudget: { maxTokens: e.AGENT_DEFAULT_MAX_TOKENS, maxCostUsd: e.AGENT_DEFAULT_MAX_COST_USD },
    },
  };
}

/**
 * What the embedded PostgreSQL's programs (initdb, the postmaster) need from the environment to
 * run; nothing of the service's own (SERVER_SECRET, JWT_SECRET, DATABASE_URL, a cloud token): a
 * process's environment stays readable in /proc to its OS user for as long as it runs, and a
 * PostgreSQL superuser reads files as that user.
 */
const PASSED_ON = ['PATH', 'TZ', 'TMPDIR', 'LD_LIBRARY_PATH'];

export function postgresEnvironment(): NodeJS.ProcessEnv {
  const passed = PASSED_ON.filter((name) => process.env[name] !== undefined).map((name) => [name, process.env[name]]);
  // Messages in English, whatever the machine's locale: readiness and failures are read from them.
  return { ...Object.fromEntries(passed), LC_MESSAGES: 'C' };
}

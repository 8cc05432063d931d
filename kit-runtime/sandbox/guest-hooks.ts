/**
 * Guest code of a hook context: a fresh context per run, in which a kit's hook scripts run.
 *
 * HOOK_BOOTSTRAP runs first, before any kit code, with the host dispatcher (an ivm.Reference) as
 * `$0`. It keeps the reference and the intrinsics it needs in closure variables only — no global,
 * no property — and exposes a frozen `kit` object of plain guest functions. So guest code can never
 * reach an isolated-vm object: `kit.log.constructor` is the guest's own Function. Option objects
 * passed to isolated-vm have null prototypes, so a kit that plants properties on
 * Object.prototype cannot change how values cross (for example asking for a Reference back).
 *
 * The bootstrap returns one function, `hooks(operation, a, b)`, that the host keeps as a Reference:
 * `hooks('load', file, source)` evaluates a hook file as a classic script (indirect eval, so its
 * function declarations become globals), `hooks('invoke', functionName, contextJson)` calls a phase
 * function. It always answers a JSON string made by the JSON.stringify captured before any kit code
 * ran: {ok, value} or {ok: false, message}. Errors are reduced to their message inside the isolate,
 * under the run's time limit, so a hostile thrown value (a Proxy, a looping `message` getter) is
 * never handed to isolated-vm to copy out on the host.
 *
 * A host call's reply reaches the isolate as a task of its own, outside the call into the hooks
 * that made it. So replies are delivered only while the invocation that asked is still running;
 * a reply that arrives after its hook returned is dropped and nothing chained on it ever runs —
 * else a hook could leave work (an endless loop) behind in a pooled isolate, out of any run's
 * time limit. Yet the invocation answers only once the host has answered every call it made (under
 * the run's time limit), so a hook's last kit.log, or a capability call it did not await, belongs
 * to its phase and is never lost; a call made once the hook has returned (by code it left queued)
 * is refused without reaching the host, since nothing would wait for it. Promise and
 * Promise.prototype are frozen before kit code runs, since settling a promise with a reply looks up
 * `then` and the species, and those must not be kit functions.
 */

export const HOOK_BOOTSTRAP = `
'use strict';
const dispatch = $0;
const capabilityNames = JSON.parse($1);
const reflectApply = Reflect.apply;
const applyReference = dispatch.apply;
const stringify = JSON.stringify;
const parse = JSON.parse;
const freeze = Object.freeze;
const GuestError = Error;
const GuestPromise = Promise;
const rejected = (message) => GuestPromise.reject(new GuestError(message));
// Which invocation of hooks() is running, if any; a host call remembers the one that made it.
let invocation = 0;
let running = false;
// Host calls the running invocation made that have not been answered yet, what to call once none
// is left, and whether its hook has returned (see drainHostCalls).
let unanswered = 0;
let onAllAnswered = null;
let returned = false;

function callHost(name, argument) {
  // Code a hook left queued (an async helper it did not await) may run once it has returned; a call
  // from there would reach the host after the drain, so it could outlive the phase and the run.
  if (!running || returned) return rejected('kit.' + name + ' was called after its hook returned');
  let json;
  try { json = stringify(argument === undefined ? null : argument); } catch (error) { return rejected('the argument of kit.' + name + ' is not JSON'); }
  if (typeof json !== 'string') return rejected('the argument of kit.' + name + ' is not JSON');
  const options = { __proto__: null, arguments: { __proto__: null, copy: true }, result: { __proto__: null, promise: true, copy: true } };
  let settle;
  const result = new GuestPromise((resolve, reject) => { settle = { __proto__: null, resolve, reject }; });
  const pending = reflectApply(applyReference, dispatch, [undefined, [name, json], options]);
  deliver(pending, invocation, settle);
  return result;
}

async function deliver(pending, askedIn, settle) {
  // Counted here rather than by callHost: a kit that has used up the stack can make the call to
  // deliver itself fail, and a call counted but never awaited would hold the drain to the time limit.
  unanswered++;
  let reply;
  try { reply = await pending; } catch { reply = undefined; }
  if (!running || askedIn !== invocation) return;
  unanswered--;
  if (unanswered === 0 && onAllAnswered !== null) onAllAnswered();
  if (returned) return;
  let answer;
  try { answer = parse(reply); } catch { answer = { __proto__: null, ok: false, message: 'malformed host reply' }; }
  if (answer.ok === true) settle.resolve(answer.value);
  else settle.reject(new GuestError(String(answer.message)));
}

const toText = (parts) => parts.map((part) => typeof part === 'string' ? part : (() => { try { return stringify(part); } catch { return String(part); } })()).join(' ');
const kit = { __proto__: null };
kit.log = (level, ...parts) => callHost('log', { level: String(level), message: toText(parts) });
for (const name of capabilityNames) kit[name] = (argument) => callHost(name, argument);
freeze(kit);
Object.defineProperty(globalThis, 'kit', { value: kit, writable: false, configurable: false, enumerable: false });

const console = freeze({
  __proto__: null,
  log: (...parts) => kit.log('info', ...parts),
  info: (...parts) => kit.log('info', ...parts),
  warn: (...parts) => kit.log('warn', ...parts),
  error: (...parts) => kit.log('error', ...parts),
  debug: (...parts) => kit.log('debug', ...parts),
});
Object.defineProperty(globalThis, 'console', { value: console, writable: false, configurable: false, enumerable: false });
// Settling a promise with another looks up then, constructor and Symbol.species; isolated-vm does
// that when a host reply arrives, so these must stay the intrinsics for the gate below to hold.
freeze(Promise.prototype);
freeze(Promise);
// Not needed by hooks and each widens what kit code can do inside the isolate.
delete globalThis.WebAssembly;
delete globalThis.SharedArrayBuffer;
delete globalThis.Atomics;

const indirectEval = eval;
function messageOf(error) {
  try {
    const message = error !== null && typeof error === 'object' && 'message' in error ? error.message : error;
    return typeof message === 'string' ? message : String(message);
  } catch { return 'unknown error'; }
}
const answer = (value) => stringify({ ok: true, value: value === undefined ? null : value });
const failure = (message, convention) => stringify({ ok: false, message: String(message), convention: convention === true });

// Once the hook has returned, waits until the host has answered every call the invocation made.
// The host runs a call when it gets to it, and may get to the invocation's own answer first: a
// hook's last kit.log, or a capability call it did not await, would then reach the host after the
// phase it belongs to had ended, or not at all. The answers themselves are dropped, as any reply
// that arrives after its hook returned: nothing chained on them runs.
async function drainHostCalls() {
  returned = true;
  while (unanswered > 0) await new GuestPromise((resolve) => { onAllAnswered = resolve; });
  onAllAnswered = null;
}

return async function hooks(operation, a, b) {
  invocation++;
  running = true;
  unanswered = 0;
  onAllAnswered = null;
  returned = false;
  try {
    if (operation === 'load') {
      indirectEval(b + '\\n//# sourceURL=kit:///' + a);
      return answer(null);
    }
    const hook = globalThis[a];
    if (typeof hook !== 'function') return failure('does not define function ' + a + '(context, kit)', true);
    const value = await hook(parse(b), kit);
    let json;
    try { json = answer(value); } catch (error) { return failure('returned a value that is not JSON: ' + messageOf(error)); }
    return typeof json === 'string' ? json : failure('returned a value that is not JSON');
  } catch (error) {
    let message = messageOf(error);
    if (typeof message !== 'string') message = 'unknown error';
    return failure(message);
  } finally {
    await drainHostCalls();
    running = false;
  }
};
`;

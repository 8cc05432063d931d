// Loaded with `node --import` into a service process by a test: two seconds in, a promise nobody
// waits on fails, as a library's unawaited call would.
setTimeout(() => void Promise.reject(new Error('an unawaited call failed')), 2_000).unref();

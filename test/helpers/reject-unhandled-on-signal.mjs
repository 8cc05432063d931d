// Loaded with `node --import` into a service process by a test: each SIGUSR2 makes a promise that
// nobody waits on fail, as a library's unawaited call would.
process.on('SIGUSR2', () => void Promise.reject(new Error('an unawaited call failed')));

import { Worker } from 'node:worker_threads';

/**
 * A few worker threads that each take one task at a time from one queue, in order. The thread's
 * module answers each `{id, request}` message with `{id, answer}`. Threads start on first use; a
 * thread keeps the process alive only while it runs a task (so an awaited answer always arrives,
 * and an idle pool never holds a process open).
 *
 * A task that overruns `timeoutMs` is refused with `overran()` and its thread replaced; no other
 * task is lost with it. With `waiting`, past `waiting.max` queued tasks a new one is refused at once
 * with `waiting.busy()`; without it, tasks queue without bound.
 */
export interface ThreadPoolOptions {
  workerUrl: URL;
  threads: number;
  timeoutMs: number;
  overran: () => Error;
  waiting?: { max: number; busy: () => Error };
}

type Task<Request, Answer> = {
  message: { id: number; request: Request };
  resolve: (answer: Answer) => void;
  reject: (error: Error) => void;
  timer?: NodeJS.Timeout;
};
type Thread<Request, Answer> = { worker: Worker; running?: Task<Request, Answer> };

export function createThreadPool<Request, Answer>(options: ThreadPoolOptions) {
  const threads: Array<Thread<Request, Answer>> = [];
  const waiting: Array<Task<Request, Answer>> = [];
  let nextId = 1;

  const finish = (thread: Thread<Request, Answer>, settle: (task: Task<Request, Answer>) => void) => {
    const task = thread.running;
    if (!task) return;
    clearTimeout(task.timer);
    thread.running = undefined;
    thread.worker.unref();
    settle(task);
    dispatch();
  };

  const retire = (thread: Thread<Request, Answer>) => {
    threads.splice(threads.indexOf(thread), 1);
    void thread.worker.terminate();
  };

  const start = (): Thread<Request, Answer> => {
    const thread: Thread<Request, Answer> = { worker: new Worker(options.workerUrl) };
    thread.worker.on('message', ({ id, answer }: { id: number; answer: Answer }) => {
      if (thread.running?.message.id === id) finish(thread, (task) => task.resolve(answer));
    });
    // A thread that dies takes only the task it was running with it.
    const died = (reason: string) => {
      if (!threads.includes(thread)) return;
      retire(thread);
      finish(thread, (task) => task.reject(new Error(`a worker thread ${reason}`)));
    };
    thread.worker.on('error', (error) => died(`failed: ${error.message}`));
    thread.worker.on('exit', () => died('stopped unexpectedly'));
    threads.push(thread);
    return thread;
  };

  function dispatch(): void {
    while (waiting.length > 0) {
      const thread = threads.find((candidate) => !candidate.running) ?? (threads.length < options.threads ? start() : undefined);
      if (!thread) return;
      const task = waiting.shift()!;
      thread.running = task;
      thread.worker.ref();
      task.timer = setTimeout(() => {
        retire(thread);
        finish(thread, (stuck) => stuck.reject(options.overran()));
      }, options.timeoutMs);
      task.timer.unref();
      thread.worker.postMessage(task.message);
    }
  }

  return {
    run(request: Request): Promise<Answer> {
      if (options.waiting && waiting.length >= options.waiting.max) return Promise.reject(options.waiting.busy());
      return new Promise((resolve, reject) => {
        waiting.push({ message: { id: nextId++, request }, resolve, reject });
        dispatch();
      });
    },
    /** Stops every thread; tasks still queued or running are refused. */
    close(): void {
      for (const task of waiting.splice(0)) task.reject(new Error('the thread pool is closed'));
      for (const thread of [...threads]) {
        retire(thread);
        finish(thread, (task) => task.reject(new Error('the thread pool is closed')));
      }
    },
  };
}

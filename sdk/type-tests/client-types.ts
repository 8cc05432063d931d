// Compiled by test/sdk/typed-client.test.ts with `tsc --noEmit`. Each @ts-expect-error must be a
// real error: if the client stopped rejecting the call, tsc would report the unused directive.
import { createSpecwrightClient, errorCodeOf, serviceErrorOf, SpecwrightTransportError, type RouterInputs, type RouterOutputs, type SpecwrightErrorCode } from '../index.ts';

const client = createSpecwrightClient({ url: 'http://127.0.0.1:3000', apiKey: 'swk_x' });

export async function inferredOutputs(): Promise<void> {
  const me = await client.me.get.query();
  const email: string = me.email;
  const admin: boolean = me.isPlatformAdmin;
  // @ts-expect-error the output is inferred: userId is a string, not a number
  const wrong: number = me.userId;
  const created = await client.apiKeys.create.mutate({ name: 'ci' });
  const key: string = created.key;
  void [email, admin, wrong, key];
}

export async function wrongInputs(): Promise<void> {
  // @ts-expect-error name must be a string
  await client.apiKeys.create.mutate({ name: 42 });
  // @ts-expect-error keyId is required
  await client.apiKeys.revoke.mutate({});
  // @ts-expect-error ownerEmail is missing
  await client.admin.createTenant.mutate({ name: 'Acme' });
  // @ts-expect-error paging takes numbers (REST query strings are coerced on the server)
  await client.projects.list.query({ limit: 'ten' });
  await client.projects.list.query({ limit: 10, offset: 20 });
}

export async function unknownProcedures(): Promise<void> {
  // @ts-expect-error there is no such procedure
  await client.projects.destroyEverything.mutate();
  // @ts-expect-error queries cannot be called as mutations
  await client.me.get.mutate();
}

export function typedFailures(error: unknown): void {
  const code: SpecwrightErrorCode | undefined = errorCodeOf(error);
  // @ts-expect-error a misspelt code is no catalog code, so the comparison cannot be true
  if (code === 'NOT_FOUNDD') return;
  const failure = serviceErrorOf(error);
  if (failure?.code === 'RATE_LIMITED' || failure?.code === 'SERVICE_UNAVAILABLE') {
    const waitSeconds: number | undefined = failure.retryAfterSeconds;
    void waitSeconds;
  }
  if (error instanceof Error && error.cause instanceof SpecwrightTransportError) {
    // A proxy's 429 or 503 says when to try again too.
    const proxyWaitSeconds: number | undefined = error.cause.retryAfterSeconds;
    // @ts-expect-error it is read-only: it is what the proxy said
    error.cause.retryAfterSeconds = 0;
    void proxyWaitSeconds;
  }
  const fields: string[] = failure?.issues.map((issue) => issue.field) ?? [];
  const requestId: string | undefined = failure?.requestId;
  void [fields, requestId];
}

export function namedInputsAndOutputs(project: RouterOutputs['projects']['get'], input: RouterInputs['projects']['create']): void {
  const name: string = project.name;
  // @ts-expect-error a description may be null
  const description: string = project.description;
  // @ts-expect-error times arrive as ISO strings, not Dates
  const created: Date = project.createdAt;
  const createdAt: string = project.createdAt;
  const wanted: string = input.name;
  // @ts-expect-error an input names its fields
  void input.phase;
  void [name, description, created, createdAt, wanted];
}

import { router } from '../../trpc/init.ts';
import { publicProcedure } from '../../trpc/procedures.ts';
import { loginInput, loginOutput } from './users.schema.ts';
import { signIn } from './users.service.ts';

const tags = ['identity'];

export const authRouter = router({
  login: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/auth/login',
        protect: false,
        tags,
        summary: 'Sign in with email and password; returns a 15-minute session token (public)',
        errorResponses: { 401: 'UNAUTHORIZED: wrong email or password', 429: 'RATE_LIMITED: too many failed sign-ins; retry after Retry-After seconds' },
      },
    })
    .input(loginInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => signIn(ctx, input)),
});

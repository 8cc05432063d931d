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
      },
    })
    .input(loginInput)
    .output(loginOutput)
    .mutation(({ ctx, input }) => signIn(ctx, input)),
});

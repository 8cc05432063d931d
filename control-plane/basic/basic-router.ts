import { basicKitsRouter } from '../domains/kits/kits.basic-router.ts';
import { basicProjectsRouter } from '../domains/projects/projects.basic-router.ts';
import { userStoriesRouter } from '../domains/user-stories/user-stories.basic-router.ts';
import { router } from '../trpc/init.ts';

/**
 * Variant A (DESIGN §5.1): the seed's plain-resource surface, served over REST under /api/basic
 * with bare bodies. Not part of the tRPC router: typed clients use Variant B (`AppRouter`).
 */
export const basicRouter = router({
  projects: basicProjectsRouter,
  userstories: userStoriesRouter,
  kits: basicKitsRouter,
});

export type BasicRouter = typeof basicRouter;

/**
 * Static nesting depth of a Handlebars template: how many blocks (`{{#each}}`, `{{#if}}`, partial
 * blocks, inline-partial decorators) are open at the deepest point. Deep nesting is how a template
 * makes rendering cost explode, so the runtime caps it; partial recursion is capped separately at
 * render time because it cannot be seen statically.
 *
 * The function must stay self-contained (no imports, no closure over module state): the sandbox
 * injects its source text into the isolate with `Function.prototype.toString`, so the host's
 * package check and the isolate's compile step apply exactly the same rule.
 */

export type HandlebarsAstNode = { type?: string; body?: unknown; program?: unknown; inverse?: unknown; chained?: boolean };

export function measureTemplateDepth(root: HandlebarsAstNode): number {
  let deepest = 0;
  // Explicit stack: a template nested thousands deep must not overflow the measuring code itself.
  const pending: Array<[HandlebarsAstNode, number]> = [[root, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop() as [HandlebarsAstNode, number];
    if (depth > deepest) deepest = depth;
    if (node === null || typeof node !== 'object') continue;
    if (node.type === 'Program' && Array.isArray(node.body)) {
      for (const child of node.body) pending.push([child as HandlebarsAstNode, depth]);
      continue;
    }
    const isBlock = node.type === 'BlockStatement' || node.type === 'PartialBlockStatement' || node.type === 'DecoratorBlock';
    if (!isBlock) continue;
    const inner = depth + 1;
    if (inner > deepest) deepest = inner;
    if (node.program) pending.push([node.program as HandlebarsAstNode, inner]);
    // `{{else if}}` chains parse as nested blocks; count a chain as one level, as authors read it.
    const inverse = node.inverse as HandlebarsAstNode | undefined;
    if (inverse) pending.push([inverse, inverse.chained ? depth : inner]);
  }
  return deepest;
}

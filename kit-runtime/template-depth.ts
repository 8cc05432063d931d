/**
 * Static measures of a Handlebars template, taken before anything costly runs.
 *
 * Nesting depth: how many blocks (`{{#each}}`, `{{#if}}`, partial blocks, inline-partial
 * decorators) are open at the deepest point. Deep nesting is how a template
 * makes rendering cost explode, so the runtime caps it; partial recursion is capped separately at
 * render time because it cannot be seen statically.
 *
 * `measureTemplateDepth` must stay self-contained (no imports, no closure over module state): the
 * sandbox injects its source text into the isolate with `Function.prototype.toString`, so the host's
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

// Characters that end a name inside a tag; quotes and `[` open literals, `(` a subexpression.
const TAG_SEPARATORS = new Set([' ', '\t', '\n', '\r', '\f', '\v', '(', ')', '=', '.', '/', '|', '~', '#', '^', '>', '&', '*', '{', '}', '!']);
const LITERAL_CLOSERS: Readonly<Record<string, string>> = { '"': '"', "'": "'", '[': ']' };

/**
 * How many expressions a template holds, counted from its text without parsing it: each `{{…}}` tag
 * counts one per name, number, string or subexpression in it (`{{json value 2}}` is 3, `{{a.b}}` 2,
 * a comment 1). Handlebars' parser and compiler cost grows with this count (tens of microseconds per
 * expression, far more for compiling to JavaScript), so the package check caps it before any parse.
 * Linear in the text and never allocating per tag; stops counting once past `stopAfter`.
 */
export function countTemplateExpressions(source: string, stopAfter = Number.MAX_SAFE_INTEGER): number {
  let count = 0;
  let open = source.indexOf('{{');
  while (open !== -1 && count <= stopAfter) {
    let end: number;
    if (source.startsWith('{{!--', open) || source.startsWith('{{~!--', open)) {
      const close = source.indexOf('--', open + 5);
      end = close === -1 ? source.length : Math.max(close, source.indexOf('}}', close));
      count += 1;
    } else if (source.startsWith('{{!', open) || source.startsWith('{{~!', open)) {
      end = source.indexOf('}}', open + 3);
      count += 1;
    } else {
      end = source.indexOf('}}', open + 2);
      if (end === -1) end = source.length;
      count += Math.max(1, countTagParts(source, open + 2, end));
    }
    if (end === -1) break;
    open = source.indexOf('{{', end + 2);
  }
  return count;
}

function countTagParts(source: string, from: number, to: number): number {
  let parts = 0;
  let inName = false;
  for (let i = from; i < to; i++) {
    const char = source[i] as string;
    const closer = LITERAL_CLOSERS[char];
    if (closer !== undefined) {
      parts++;
      inName = false;
      const close = source.indexOf(closer, i + 1);
      if (close === -1 || close >= to) return parts;
      i = close;
    } else if (char === '(') {
      parts++;
      inName = false;
    } else if (TAG_SEPARATORS.has(char)) {
      inName = false;
    } else if (!inName) {
      parts++;
      inName = true;
    }
  }
  return parts;
}

/**
 * How deep subexpressions nest inside any one tag (`{{a (b (c x))}}` is 2), read from the text:
 * Handlebars parses deep nesting far more slowly than the expression count suggests, so the package
 * check caps it before parsing. Parentheses inside string and `[…]` literals are text.
 */
export function deepestSubexpression(source: string): number {
  let deepest = 0;
  let open = source.indexOf('{{');
  while (open !== -1) {
    if (source.startsWith('{{!', open) || source.startsWith('{{~!', open)) {
      const comment = source.startsWith('--', source.indexOf('!', open) + 1);
      const close = source.indexOf(comment ? '--}}' : '}}', open + 3);
      if (close === -1) break;
      open = source.indexOf('{{', close + 2);
      continue;
    }
    let end = source.indexOf('}}', open + 2);
    if (end === -1) end = source.length;
    let depth = 0;
    for (let i = open + 2; i < end; i++) {
      const char = source[i] as string;
      const closer = LITERAL_CLOSERS[char];
      if (closer !== undefined) {
        const close = source.indexOf(closer, i + 1);
        if (close === -1 || close >= end) break;
        i = close;
      } else if (char === '(') {
        depth++;
        if (depth > deepest) deepest = depth;
      } else if (char === ')') {
        depth = Math.max(0, depth - 1);
      }
    }
    open = source.indexOf('{{', end + 2);
  }
  return deepest;
}

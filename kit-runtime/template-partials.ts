/**
 * Which partials a parsed Handlebars template calls by a fixed name, and which it declares inline.
 * A kit's templates can only call partials the kit provides: `manifest.partials`, registered for
 * every template, and `{{#*inline "name"}}` blocks (Handlebars registers no partials of its own, and
 * the runtime none either). A call to any other name renders "The partial x could not be found" in
 * every run, so the package check refuses it at publish.
 *
 * Left alone, since no static check can know them: dynamic names (`{{> (lookup . "kind")}}`),
 * `{{> @partial-block}}` (the content of the partial block being rendered), and the name of a partial
 * block (`{{#> layout}}fallback{{/layout}}` renders its fallback when `layout` does not exist).
 */

export type PartialCall = { name: string; line: number };
export type TemplatePartials = {
  /** Calls by a fixed name, the first of each name (in source order). */
  calls: PartialCall[];
  /** Names declared with `{{#*inline "name"}}`. */
  inline: string[];
  /** An inline partial whose name is computed (`{{#*inline name}}`): any name may exist. */
  computedInline: boolean;
};

type AnyNode = hbs.AST.Node & { loc?: hbs.AST.SourceLocation };

export function scanTemplatePartials(ast: hbs.AST.Program): TemplatePartials {
  const calls = new Map<string, number>();
  const inline: string[] = [];
  let computedInline = false;
  // Explicit stack: nesting is bounded by the depth limit, but the walk need not rely on it.
  const pending: AnyNode[] = [ast];
  while (pending.length > 0) {
    const node = pending.pop() as AnyNode;
    switch (node.type) {
      case 'Program':
        pending.push(...[...(node as hbs.AST.Program).body].reverse());
        break;
      case 'BlockStatement':
      case 'PartialBlockStatement':
      case 'DecoratorBlock': {
        const block = node as hbs.AST.BlockStatement;
        if (node.type === 'DecoratorBlock' && (block.path as hbs.AST.PathExpression).original === 'inline') {
          const name = literalValue(block.params[0]);
          if (name === undefined) computedInline = true;
          else inline.push(name);
        }
        if (block.inverse) pending.push(block.inverse);
        if (block.program) pending.push(block.program);
        break;
      }
      case 'PartialStatement': {
        const callee = (node as hbs.AST.PartialStatement).name as hbs.AST.PathExpression | hbs.AST.SubExpression | hbs.AST.Literal;
        if (callee.type === 'SubExpression') break;
        // What Handlebars' compiler passes to the runtime as the partial's name.
        const name = String((callee as { original: unknown }).original);
        if (name !== '@partial-block' && !calls.has(name)) calls.set(name, node.loc?.start.line ?? 1);
        break;
      }
    }
  }
  return { calls: [...calls].map(([name, line]) => ({ name, line })), inline, computedInline };
}

function literalValue(node: hbs.AST.Expression | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (node.type === 'StringLiteral' || node.type === 'NumberLiteral' || node.type === 'BooleanLiteral') {
    return String((node as hbs.AST.StringLiteral | hbs.AST.NumberLiteral | hbs.AST.BooleanLiteral).value);
  }
  return undefined;
}

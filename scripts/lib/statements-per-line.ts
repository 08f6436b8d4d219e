// statements-per-line: the lines of a TypeScript file on which more than one statement starts, counted as ESLint's
// max-statements-per-line counts them (a statement that is the lone, unbraced body of an if, a loop or a label is
// its parent's: `if (x) return;` is one); read with the TypeScript compiler, so a `;` in a string is no statement.
import ts from 'typescript';

export interface CrowdedLine { line: number; statements: number; text: string }

/** Parents whose one unbraced child statement is not counted apart (ESLint's SINGLE_CHILD_ALLOWED). */
const carriesOne = (p: ts.Node, child: ts.Node) => (ts.isIfStatement(p) && p.elseStatement !== child)
  || ts.isForStatement(p) || ts.isForInStatement(p) || ts.isForOfStatement(p) || ts.isWhileStatement(p)
  || ts.isDoStatement(p) || ts.isLabeledStatement(p);

/** Whether a node is a statement in ESLint's sense (declarations of functions and classes included). */
const isStatement = (n: ts.Node) => ts.isStatement(n) || ts.isFunctionDeclaration(n) || ts.isClassDeclaration(n)
  || ts.isVariableStatement(n) || ts.isModuleDeclaration(n) || ts.isImportDeclaration(n)
  || ts.isExportDeclaration(n) || ts.isExportAssignment(n);

/** The lines of `text` with more than `max` statements starting on them. */
export function crowdedLines(fileName: string, text: string, max = 1): CrowdedLine[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const perLine = new Map<number, number>();
  const visit = (n: ts.Node) => {
    if (isStatement(n) && !ts.isBlock(n) && !ts.isEmptyStatement(n) && !carriesOne(n.parent, n)) {
      const line = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
      perLine.set(line, (perLine.get(line) ?? 0) + 1);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  const lines = text.split('\n');
  return [...perLine].filter(([, count]) => count > max).sort(([a], [b]) => a - b)
    .map(([line, statements]) => ({ line, statements, text: lines[line - 1]!.trim() }));
}

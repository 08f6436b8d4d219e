// jinja: user data whose first line is `## template: jinja` is a Jinja template that cloud-init renders from its
// instance data before reading it; so is it here, with nunjucks (Jinja's syntax in JavaScript). The data are
// cloud-init's names: `v1.*` (also at the top level, as cloud-init aliases them) and `ds.meta_data.*`, each key
// with a dash also under its underscore name. What cannot be rendered is refused with its line: a syntax error,
// a variable with no value (cloud-init would write CI_MISSING_JINJA_VAR into the config), include/import/extends
// (there is nothing to load), and names that reach into JavaScript objects (nunjucks is no sandbox).
import type { Environment } from 'nunjucks';
import { isMap } from '../safe-yaml.ts';

const HEADER = /^##\s*template:\s*jinja[ \t]*\r?\n?/i;

/** True when the text is a Jinja template in cloud-init's sense. */
export const isJinja = (text: string) => HEADER.test(text);

/** cloud-init's instance data, as far as this system knows it. */
export interface InstanceData {
  v1: Record<string, unknown>;
  ds: { meta_data: Record<string, unknown> };
}

/** Renders a template (the header line included, which it removes), or says why not. */
export type JinjaRender = (text: string) => { ok: true; text: string } | { ok: false; message: string };

/** Keys with a dash also under their underscore name, at every depth (cloud-init's convert_jinja_instance_data). */
function withAliases(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withAliases);
  if (!isMap(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] = withAliases(x);
    if (k.includes('-') && !(k.replace(/-/g, '_') in v)) out[k.replace(/-/g, '_')] = out[k];
  }
  return out;
}

const FORBIDDEN = /\b(constructor|prototype|__proto__|__\w*)\b/;
const LOADING = /{%-?\s*(include|import|from|extends)\b/;

/** Why a template may not be rendered, with its line; undefined when it may. */
function refusal(text: string): string | undefined {
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    const tags = line.match(/{{.*?}}|{%.*?%}/g) ?? [];
    const bad = tags.find((t) => FORBIDDEN.test(t));
    if (bad) return `line ${i + 1}: ${bad.trim()} names a JavaScript internal, which templates may not reach`;
    const load = LOADING.exec(line);
    if (load) return `line ${i + 1}: {% ${load[1]} %} loads another template, and user data has no others`;
  }
  return undefined;
}

/** A nunjucks error ("(unknown path) [Line 3, Column 1]\n  attempted to output ...") as "line 3: ...: <the line>". */
function explain(e: Error, text: string): string {
  const at = /\[Line (\d+), Column (\d+)\]/.exec(e.message);
  const why = e.message.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('(unknown path)'))
    .pop() ?? e.message;
  const reason = /null or undefined/.test(why) ? 'a variable that has no value in the instance data' : why;
  if (!at) return reason;
  const source = text.split('\n')[Number(at[1]) - 1]?.trim() ?? '';
  return `line ${at[1]}: ${reason}${source ? ` (${source.slice(0, 80)})` : ''}`;
}

/** A renderer over the instance data; nunjucks is loaded only when user data is a template. */
export async function jinjaRenderer(data: InstanceData): Promise<JinjaRender> {
  const nunjucks = (await import('nunjucks')).default;
  const env: Environment = new nunjucks.Environment([], { autoescape: false, throwOnUndefined: true });
  const v1 = withAliases(data.v1) as Record<string, unknown>;
  const context = { ...v1, v1, ds: withAliases(data.ds) };
  return (text) => {
    const refused = refusal(text);
    if (refused) return { ok: false, message: `a Jinja template: ${refused}` };
    try {
      return { ok: true, text: env.renderString(text, context).replace(HEADER, '') };
    } catch (e) {
      return { ok: false, message: `a Jinja template that cannot be rendered: ${explain(e as Error, text)}` };
    }
  };
}

/** For callers without instance data (or a test): every template refused, naming why. */
export const noJinja: JinjaRender = () => ({
  ok: false, message: 'a Jinja template, and no instance data to render it from',
});

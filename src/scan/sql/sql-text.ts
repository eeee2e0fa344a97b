/**
 * SQL text built from parts: literal text we generate, and values that become bound
 * parameters. User input never becomes text: values go in as parameters, names as quoted
 * identifiers (see dialects.ts). Rendering numbers the placeholders in text order, so the
 * same fragment works for `$1` and `?` dialects alike.
 */

interface Param {
  readonly value: unknown;
}
type Part = string | Param;

export class SqlText {
  constructor(readonly parts: readonly Part[]) {}
}

/** Template tag: literal text, with only SqlText interpolated. */
export function sql(strings: TemplateStringsArray, ...values: SqlText[]): SqlText {
  const parts: Part[] = [];
  strings.forEach((s, i) => {
    if (s) parts.push(s);
    const v = values[i];
    if (v) parts.push(...v.parts);
  });
  return new SqlText(parts);
}

/** Text the generator itself produced (keywords, quoted identifiers, validated numbers). */
export const raw = (text: string): SqlText => new SqlText([text]);

/** A value bound as a parameter. */
export const param = (value: unknown): SqlText => new SqlText([{ value }]);

/** Fragments joined by a separator. */
export function join(items: readonly SqlText[], separator: string): SqlText {
  const parts: Part[] = [];
  items.forEach((item, i) => {
    if (i > 0) parts.push(separator);
    parts.push(...item.parts);
  });
  return new SqlText(parts);
}

export interface RenderedQuery {
  sql: string;
  params: unknown[];
}

/** The statement text with the dialect's placeholders (`placeholder(0)` is the first) and its parameters. */
export function render(text: SqlText, placeholder: (index: number) => string): RenderedQuery {
  let out = "";
  const params: unknown[] = [];
  for (const part of text.parts) {
    if (typeof part === "string") out += part;
    else {
      out += placeholder(params.length);
      params.push(part.value);
    }
  }
  return { sql: out, params };
}

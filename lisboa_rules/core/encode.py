"""The one place where data strings become text of another language.

Every string from rules/ (a name, id, title, rule text, file name, line) that reaches a
generated file goes through one of these functions, chosen by where it lands:

Python (the engine)
    `py_str`      a string literal (repr's escapes, always double-quoted as ruff writes it);
    `py_comment`  the text of one `#` comment line: nothing can end the line or the comment;
    `py_docstring` the text inside a `\"\"\"...\"\"\"` docstring: nothing can close it.

TOML (the package's pyproject.toml)
    `toml_str`    a basic string: `"` and `\\` escaped, anything not printable as `\\uXXXX`;
    `toml_comment` the text of one `#` comment line (as `py_comment`).

Markdown and HTML (the reference)
    `html_text`   text or a double-quoted attribute value in HTML (markupsafe's escape);
    `md_text`     inline Markdown text: no markup, link, HTML or table break survives;
    `md_code`     an inline code span;
    `ml_comment`  the text of an HTML/Markdown `<!-- ... -->` comment: it can neither close
                  the comment nor open another one;
    `css_string`, `mermaid_label`, `slug`: a CSS string, a Mermaid label, an anchor id.

Anything that is not printable (control characters, line and paragraph separators, bidi and
other format characters, surrogates, unassigned code points) is written as its escape in
Python and in comments, so what a reader sees is what the file holds.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

# --- Python ------------------------------------------------------------------------------------


def _escape_char(ch: str) -> str:
    """repr's escape of one non-printable character (`\\n`, `\\x00`, `\\u202e`, `\\U000e0001`)."""
    return repr(ch)[1:-1]


def py_str(value: str) -> str:
    """A Python string literal that evaluates to `value`: repr's escapes for every character
    that is not printable, `\\` and `"` escaped, always in double quotes."""
    if value.isprintable() and '"' not in value and "\\" not in value:
        return '"' + value + '"'  # nothing to escape (most strings): the same, quicker
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(_escape_char(ch))
    return '"' + "".join(out) + '"'


_QUOTE_RUN = re.compile(r"\"{3,}|'{3,}")


def py_comment(text: str) -> str:
    """The text of one `#` comment line: backslashes doubled, every non-printable character
    (a line break would end the comment and make the rest code) and every run of three or
    more quotes written as escapes, so the line reads the same inside a docstring too."""
    if text.isprintable() and "\\" not in text and not _QUOTE_RUN.search(text):
        return text  # nothing to escape (most lines): the same, quicker
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append(_escape_char(ch))
    return _QUOTE_RUN.sub(lambda m: "".join("\\" + q for q in m.group()), "".join(out))


def py_docstring(text: str) -> str:
    """Text for the inside of a `\"\"\"` docstring: `\\` and every `"` escaped, non-printable
    characters as escapes; the docstring's value is `text` again."""
    return py_str(text)[1:-1]


# --- TOML --------------------------------------------------------------------------------------


def toml_str(value: str) -> str:
    """A TOML basic string whose value is `value`: `"` and `\\` escaped, every character that
    is not printable (TOML allows no control character in a string) as `\\uXXXX` or
    `\\UXXXXXXXX`, a lone surrogate (no TOML text holds one) as U+FFFD."""
    out = ['"']
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif 0xD800 <= ord(ch) <= 0xDFFF:
            out.append("\\ufffd")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def toml_comment(text: str) -> str:
    """The text of one TOML `#` comment line: as `py_comment` (nothing can end the line, every
    non-printable character written as its escape)."""
    return py_comment(text)


# --- HTML and Markdown -------------------------------------------------------------------------

# Characters that are not markup but change what a reader sees: control characters (but tab and
# line feed), bidi embeddings, overrides, isolates and marks, line and paragraph separators.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with every invisible control (see _INVISIBLE) written as its escape (`\\u202e`),
    so a page shows what its data holds. Markup in, Markup out."""
    if (type(text) is str or isinstance(text, Markup)) and _INVISIBLE.search(text) is None:
        return text  # nothing to escape (most texts): the same, quicker
    out = _INVISIBLE.sub(lambda m: _escape_char(m.group()), text)
    return Markup(out) if isinstance(text, Markup) else out


def page_value(value: object) -> object:
    """What the reference templates print for `{{ value }}` (Jinja's finalize): strings with
    their invisible controls made visible, anything else as it is."""
    return visible(value) if isinstance(value, str) else value


def html_text(text: object) -> Markup:
    """Text for HTML content or a double-quoted attribute value."""
    return escape(visible(text) if isinstance(text, str) else text)


def ml_comment(text: str) -> Markup:
    """The text of one line of an HTML or Markdown comment, percent-encoded where it matters:
    `<`, `>`, `!`, `&`, `%` (so the encoding reads back), every `-` followed by another `-` or
    ending the line (no `--` survives, nothing can end in `-`) and every character that is not
    printable. Safe unescaped in both formats (a Markup, so HTML templates do not escape it
    again)."""
    out = []
    for i, ch in enumerate(text):
        if (
            ch in "<>!&%"
            or not ch.isprintable()
            or (ch == "-" and (i + 1 == len(text) or text[i + 1] == "-"))
        ):
            out.append("".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")))
        else:
            out.append(ch)
    return Markup("".join(out))


_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&])")
_MD_ORDERED = re.compile(r"\s*[0-9]+(?=[.)])")  # CommonMark list markers are ASCII
_MD_BLOCK = re.compile(r"\s*(?=[#>+=-])")


def md_guard_start(s: str) -> str:
    """Keep data at the start of a line from becoming a heading, quote or list item."""
    m = _MD_ORDERED.match(s)
    if m:
        return s[: m.end()] + "\\" + s[m.end() :]
    m = _MD_BLOCK.match(s)
    if m:
        return s[: m.end()] + "\\" + s[m.end() :]
    return s


def md_inline(text: str) -> str:
    """Markdown punctuation, HTML and pipes in `text` escaped (line breaks are the caller's)."""
    return _MD_INLINE.sub(r"\\\1", text)


def md_text(text: object) -> str:
    """Escape data for inline Markdown: no markup, links, HTML or table breaks survive."""
    s = " ".join(visible(str(text)).split())
    return md_guard_start(md_inline(s))


def md_code(text: object) -> str:
    """An inline code span: backticks (as `'`) and line breaks cannot end it early."""
    return "`" + " ".join(str(text).replace("`", "'").split()) + "`"


def css_string(text: object) -> Markup:
    """A CSS string literal: everything but letters, digits and spaces as a hex escape."""
    out = "".join(c if c.isalnum() or c == " " else f"\\{ord(c):x} " for c in str(text))
    return Markup(f'"{out}"')


def mermaid_label(text: object) -> str:
    """A quoted Mermaid label: anything that could end the label or the block is encoded."""
    s = " ".join(str(text).split())
    return '"' + re.sub(r"[^\w .,:()+?'\-]", lambda m: f"#{ord(m.group())};", s) + '"'


def slug(text: str) -> str:
    """An id fit for an HTML anchor (rule ids already are; source ids have `:`, `#`, `§`)."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-") or "x"

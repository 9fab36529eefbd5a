"""The single registry of diagnostic codes (in the style of mypy's `errorcodes.py`).

Every `Diagnostic.code` must be a key of `CODES`; `lisboa-rules explain CODE` prints the entry.
Names are kebab-case and stable: tests and inline `# E: code` markers refer to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Category = Literal["load", "schema", "model", "check", "emit", "write"]
Severity = Literal["error", "warning"]

CATEGORIES: tuple[Category, ...] = ("load", "schema", "model", "check", "emit", "write")


@dataclass(frozen=True)
class ErrorCode:
    """One registered diagnostic code with its default severity and long explanation."""

    name: str
    summary: str
    category: Category
    severity: Severity
    explanation: str


CODES: dict[str, ErrorCode] = {}


def _code(
    name: str, category: Category, summary: str, explanation: str, severity: Severity = "error"
) -> ErrorCode:
    """Register one code; duplicates are a programming error."""
    if name in CODES:
        raise ValueError(f"duplicate error code {name!r}")
    code = ErrorCode(name, summary, category, severity, explanation.strip())
    CODES[name] = code
    return code


def get(name: str) -> ErrorCode:
    """Return the registered code `name` (KeyError when unknown)."""
    return CODES[name]


# --- load: reading bytes and strict YAML ---------------------------------------------------

_code(
    "yaml-syntax",
    "load",
    "the file is not valid YAML",
    """
The YAML parser could not read the file. The position points at the first character it could
not make sense of; a note may point at the construct it was reading (for example an unclosed
flow list).

    bad:   actions: [build, trade
    fix:   actions: [build, trade]
""",
)
_code(
    "duplicate-key",
    "load",
    "the same key appears twice in one mapping",
    """
Plain YAML loaders silently keep the last value, so half of your rule would vanish. The error
points at the second key and a note points at the first. Merge the two entries or rename one.

    bad:   cost: 2
           cost: 3
    fix:   cost: 3
""",
)
_code(
    "yaml-alias",
    "load",
    "anchors (&name) and aliases (*name) are not allowed",
    """
Anchors and aliases make one value appear in several places with a single source position,
and nested aliases can expand exponentially. Write the value out where it is used, or give it
an id and refer to that id.

    bad:   base: &b {cost: 2}
           deluxe: *b
    fix:   base: {cost: 2}
           deluxe: {cost: 2}
""",
)
_code(
    "yaml-merge-key",
    "load",
    "the YAML merge key '<<' is not allowed",
    """
Merge keys are a YAML 1.1 extension that YAML 1.2 and most editors do not support, and they hide
where a value really comes from. Spell the keys out (variants are the way to share and override).

    bad:   <<: *defaults
    fix:   cost: 2
           phase: build
""",
)
_code(
    "yaml-tag",
    "load",
    "only the core YAML tags are allowed",
    """
Tags such as !!set, !!binary, !!timestamp or custom !tags do not map to JSON data, so the schema
could not check them. Only !!str, !!int, !!float, !!bool, !!null, !!seq and !!map are accepted,
and the value must fit the tag. Usually the fix is to remove the tag, or to quote the value.

    bad:   since: !!timestamp 2017-01-01
    fix:   since: "2017-01-01"
""",
)
_code(
    "non-string-key",
    "load",
    "mapping keys must be strings",
    """
Keys like 1, true or null become non-string keys, which JSON (and the schema) cannot express.
Quote the key, or use a list instead of a mapping.

    bad:   1: first player bonus
    fix:   "1": first player bonus
""",
)
_code(
    "file-too-large",
    "load",
    "the file is larger than the size limit",
    """
Rules files are small; a file over the limit (1 MiB) is almost certainly not a rules file
(a data dump, a binary) and is refused before parsing. Split the data into several files.

    bad:   rules/everything.yaml   (3 MiB)
    fix:   rules/actions/*.yaml, rules/components/*.yaml
""",
)
_code(
    "nesting-too-deep",
    "load",
    "the data is nested too deeply",
    """
Collections nested more than 64 levels deep are refused: no rule needs that, and deep nesting
is a classic way to crash parsers. Flatten the structure, for example by giving inner parts ids.

    bad:   a: [[[[[[ ... 70 levels ... ]]]]]]
    fix:   a: [inner-table]   # and define inner-table separately
""",
)
_code(
    "not-utf8",
    "load",
    "the file is not valid UTF-8",
    """
Rules files must be UTF-8. The position points at the first byte that is not valid UTF-8 or at
a control character YAML does not allow. Re-save the file as UTF-8 in your editor.

    bad:   name: Pra\\xe7a do Com\\xe9rcio   (Latin-1 bytes)
    fix:   name: Praça do Comércio           (saved as UTF-8)
""",
)
_code(
    "multi-document",
    "load",
    "a rules file must contain exactly one YAML document",
    """
A second '---' starts another document, which would be silently ignored or merged in a
surprising way. Put each document in its own file.

    bad:   kind: action
           ---
           kind: action
    fix:   two files, one document each
""",
)
_code(
    "empty-document",
    "load",
    "the file contains no data",
    """
The file is empty, or holds only comments or a null value. Add content or delete the file.

    bad:   # TODO
    fix:   kind: action
           id: build
""",
)
_code(
    "unreadable-file",
    "load",
    "a file or directory could not be read",
    """
The operating system refused to read the path (missing, permission denied, a directory where a
file was expected). The message carries the system error.

    bad:   lisboa-rules build --rules rulse/
    fix:   lisboa-rules build --rules rules/
""",
)
_code(
    "no-rules-files",
    "load",
    "the rules directory contains no .yaml or .yml files",
    """
Nothing would be compiled. Check the --rules directory and the file extensions
(hidden files and directories, starting with '.', are skipped).

    bad:   rules/game.yml.txt
    fix:   rules/game.yaml
""",
)

# --- schema: structural validation against the packaged JSON schemas -----------------------

_code(
    "schema-type",
    "schema",
    "a value has the wrong type",
    """
The schema expects another type at this place, for example a number where text was given.
Remember that quoting makes a string, and that only true/false are booleans (YAML 1.2).

    bad:   players: {min: 2, max: "4"}
    fix:   players: {min: 2, max: 4}
""",
)
_code(
    "schema-unknown-key",
    "schema",
    "a key is not allowed here",
    """
Every object in the rules format has a fixed set of keys, so a typo is an error instead of a
silently ignored setting. The message suggests the closest allowed key when there is one.

    bad:   efects: [...]
    fix:   effects: [...]
""",
)
_code(
    "schema-required",
    "schema",
    "a required key is missing",
    """
The object lacks a key the schema requires. The error points at the object (or at its key in
the parent). Add the key.

    bad:   - id: build          # no 'phase'
    fix:   - id: build
             phase: build
""",
)
_code(
    "schema-enum",
    "schema",
    "a value is not one of the allowed choices",
    """
The value must be one of a fixed list of words (or one exact word). The message lists the
choices and suggests the closest one.

    bad:   phase: buld
    fix:   phase: build
""",
)
_code(
    "schema-range",
    "schema",
    "a number, text or list is too small or too large",
    """
A number is outside its minimum/maximum, or a list or text has too few or too many elements.

    bad:   players: {min: 0, max: 4}
    fix:   players: {min: 1, max: 4}
""",
)
_code(
    "schema-pattern",
    "schema",
    "a text value does not have the required form",
    """
Some values (ids, colours, expressions' names) must match a pattern, for example lower-case
words joined by '-' or '_'. The message shows the pattern.

    bad:   id: Royal Court
    fix:   id: royal-court
""",
)
_code(
    "schema-invalid",
    "schema",
    "a value does not match the schema",
    """
A schema rule other than type, key, choice, range or pattern failed, for example a list with
repeated items where items must be unique, or an object matching none of several shapes.
The message is the validator's own description.

    bad:   tags: [port, port]
    fix:   tags: [port]
""",
)
_code(
    "unknown-kind",
    "schema",
    "the document's 'kind' is not a known kind",
    """
The top-level 'kind' selects the schema a file is checked against. The message suggests the
closest known kind; `lisboa-rules schema` lists them all.

    bad:   kind: acton
    fix:   kind: action
""",
)
_code(
    "duplicate-kind",
    "schema",
    "a kind that may appear only once is defined in two files",
    """
Some kinds (such as the game description) describe the whole game and must be unique. The
error points at the second file and a note at the first. Merge the files.

    bad:   rules/game.yaml and rules/game2.yaml both say  kind: game
    fix:   keep one game file
""",
)
_code(
    "missing-kind",
    "schema",
    "the document has no top-level 'kind'",
    """
Every rules file starts with a 'kind' that says what it describes, so it can be checked
against the right schema.

    bad:   id: build
    fix:   kind: action
           id: build
""",
)

# --- model: building the game model from validated documents -------------------------------

_code(
    "duplicate-id",
    "model",
    "two definitions share the same id",
    """
Ids must be unique within their namespace so that references are unambiguous. The error points
at the second definition and a note at the first. Rename one of them.

    bad:   - id: cathedral
           - id: cathedral
    fix:   - id: cathedral
           - id: cathedral-annex
""",
)
_code(
    "unknown-reference",
    "model",
    "a reference names an id that is not defined",
    """
A field that refers to another definition (a component, action, tile, noble, ...) names an id
that does not exist. The message suggests the closest defined id.

    bad:   requires: [noble.kng]
    fix:   requires: [noble.king]
""",
)
_code(
    "unknown-name",
    "model",
    "an expression uses a name that is not defined",
    """
Expressions may only use the names the rules define (values, counters, player attributes) and
the built-in functions. The message suggests the closest known name.

    bad:   when: "player.wig >= 2"
    fix:   when: "player.wigs >= 2"
""",
)
_code(
    "expr-syntax",
    "model",
    "an expression cannot be parsed",
    """
The text of a condition or formula is not a valid expression of the rules language. The
position points into the expression where parsing stopped.

    bad:   amount: "2 * (buildings + 1"
    fix:   amount: "2 * (buildings + 1)"
""",
)
_code(
    "overlay-conflict",
    "model",
    "two variants change the same thing differently",
    """
When several variants are applied together, they must not set the same target to different
values, because the result would depend on their order. Choose one, or combine them into a
new variant.

    bad:   --variant short-game --variant long-game   (both set game.rounds)
    fix:   --variant short-game
""",
)
_code(
    "unknown-variant",
    "model",
    "the requested variant does not exist",
    """
A --variant name (or a variant's dependency) does not name a file in rules/variants/.
The message suggests the closest variant.

    bad:   lisboa-rules build --variant solo-mod
    fix:   lisboa-rules build --variant solo-mode
""",
)
_code(
    "overlay-unknown-target",
    "model",
    "a variant changes something that does not exist",
    """
A variant overlay addresses an id or key that the base rules do not define, so it would do
nothing. Fix the target (the message suggests the closest one) or remove the change.

    bad:   set: {action.biuld.cost: 1}
    fix:   set: {action.build.cost: 1}
""",
)
_code(
    "unknown-source",
    "model",
    "a source names something the model does not provide",
    """
A 'source' (for example a scoring source or a value that a table is read from) names a kind of
data the model does not define. The message suggests the closest known source.

    bad:   sources: [{table: wig-tabel}]
    fix:   sources: [{table: wig-table}]
""",
)

# --- check: semantic checks over the model -------------------------------------------------

_code(
    "expr-type",
    "check",
    "an expression has the wrong type",
    """
The expression parses but combines values of incompatible types, or yields the wrong type for
its place (a condition must be a boolean, an amount a number).

    bad:   when: "player.money + true"
    fix:   when: "player.money > 0"
""",
)
_code(
    "unknown-placeholder",
    "check",
    "rule text uses a placeholder that is not defined",
    """
Rule text may contain {placeholders} that are replaced by values of the rule. This one names no
value the rule has. Fix the name, or escape a literal brace by doubling it.

    bad:   text: "Pay {cots} réis."
    fix:   text: "Pay {cost} réis."
""",
)
_code(
    "missing-text",
    "check",
    "a rule has no text for the printed reference",
    """
The printable rules reference is generated from the text in the data; a rule without text would
leave a hole in the rulebook. Add the text field.

    bad:   - id: build
             cost: 2
    fix:   - id: build
             cost: 2
             text: "Build one building in a free lot."
""",
)
_code(
    "value-out-of-range",
    "check",
    "a value is outside what the rest of the rules allow",
    """
A value is valid on its own but inconsistent with other rules, for example a table that covers
more players than the game supports, or a cost above the most money a player can hold.

    bad:   players: {max: 4}   ...   income: {5: 3}
    fix:   income: {4: 3}
""",
)
_code(
    "unused-value",
    "check",
    "a defined value is never used",
    """
A named value or table is defined but nothing refers to it. This is only a warning: it often
means a reference has a typo or a rule was removed.

    bad:   values: {harbour-bonus: 2}   # no rule uses harbour-bonus
    fix:   use it, or delete it
""",
    severity="warning",
)

# --- emit: rendering the engine and the reference ------------------------------------------

_code(
    "generated-invalid",
    "emit",
    "a generated Python file does not compile",
    """
A template produced Python code that does not compile. This is a bug in lisboa-rules (or in a
template), not in your rules: nothing was written. Please report it with the message.

    bad:   generated/lisboa_engine.py:12:5: invalid syntax
    fix:   report it; run with LISBOA_RULES_DEBUG=1 for details
""",
)
_code(
    "template-error",
    "emit",
    "a template failed to render",
    """
A template referred to a missing value or raised an error while rendering. This is a bug in
lisboa-rules or in a template, not in your rules; nothing was written.

    bad:   'Action object' has no attribute 'cots'
    fix:   report it
""",
)

# --- write: updating the output folder -----------------------------------------------------

_code(
    "write-failed",
    "write",
    "the output folder could not be updated",
    """
Writing the outputs failed (disk full, permission denied, ...). The output folder is updated as
a whole, so it was left exactly as it was before. The message carries the system error.

    bad:   generated/ is read-only
    fix:   make it writable and build again
""",
)
_code(
    "stray-output",
    "write",
    "a file in the output folder was not produced by lisboa-rules",
    """
The output folder contains a file that lisboa-rules did not write (it is not listed in
generated/.manifest). It is left alone, never deleted; move it elsewhere or delete it yourself.

    bad:   generated/notes.txt
    fix:   keep notes outside generated/
""",
    severity="warning",
)

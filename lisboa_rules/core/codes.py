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

    @property
    def examples(self) -> tuple[tuple[str, str], ...]:
        """The explanation's wrong examples with their fixes: each `bad:` block and the `fix:`
        block after it (their continuation lines joined, as written)."""
        blocks: list[tuple[str, list[str]]] = []
        for line in self.explanation.splitlines():
            head = line.strip().split(":", 1)[0]
            if line.startswith("    ") and head in ("bad", "fix", "new") and ":" in line:
                blocks.append((head, [line.split(":", 1)[1].strip()]))
            elif blocks and line.startswith("    ") and line.strip():
                blocks[-1][1].append(line.strip())
            elif line.strip():
                blocks.append(("", []))
        out: list[tuple[str, str]] = []
        for (head, lines), nxt in zip(blocks, [*blocks[1:], ("", [])], strict=True):
            if head == "bad" and nxt[0] == "fix":
                out.append(("\n".join(lines), "\n".join(nxt[1])))
        return tuple(out)


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
flow list). The message says in words what is wrong and how to fix it: a tab (indent with
spaces), a line indented unlike its siblings, a quote or bracket never closed, a second ': '
in an unquoted text.

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

    bad:   kind: variant
           id: short-game
           ---
           kind: variant
           id: long-game
    fix:   rules/variants/short-game.yaml and rules/variants/long-game.yaml
""",
)
_code(
    "empty-document",
    "load",
    "the file contains no data",
    """
The file is empty, or holds only comments or a null value. Add content or delete the file.

    bad:   # TODO: the house rules
    fix:   kind: variant
           id: house-rules
           ...
""",
)
_code(
    "unreadable-file",
    "load",
    "a file or directory could not be read",
    """
The operating system refused to read the path (missing, permission denied, a symbolic link to
a file that is gone). The message carries the system error. A rules directory that does not
exist is reported without a position.

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
silently ignored setting. The message lists the keys allowed at that place and suggests the
closest one when there is one.

    bad:   titel: The Crown's tax
    fix:   title: The Crown's tax
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

    bad:   procedure: buld-store
    fix:   procedure: build-store
""",
)
_code(
    "schema-range",
    "schema",
    "a number, text or list is too small or too large",
    """
A number is outside its minimum/maximum or beyond what a saved game holds (a whole number from
-2**63 to 2**63 - 1), or a list or text has too few or too many elements.

    bad:   players: {min: 0, max: 4}
    fix:   players: {min: 1, max: 4}
""",
)
_code(
    "schema-pattern",
    "schema",
    "a text value does not have the required form",
    """
Some values (ids, colours, expressions' names) have a fixed form, for example lower-case
words joined by '-' or '_'. The message says in words what is expected there, with an example.

    bad:   id: Royal Court
    fix:   id: royal-court
""",
)
_code(
    "bad-name",
    "schema",
    "a name the rules give is not a name of the rules' grammar, or is taken",
    """
Every name a rule binds or declares (a `let:`, the `as:` of a `for_each` or a `choose`, a
parameter, a `with:` or `apply:` key, a query and its arguments, a vocabulary name, a field of
the state, a measure) is a lower-case letter followed by lower-case letters, digits and '_', at
most 40 characters. The engine writes it into its code, so a name outside that form is refused
where it is written, as are the words Python itself means something by (keywords such as `if`
or `match`, built-ins such as `len` or `type`), the runtime's own names (`new_game`, `json`),
`self`, `cls` and names starting with `v_`. The error suggests a name to use instead.

    bad:   - let: {"room left": 3}
    fix:   - let: {room_left: 3}
""",
)
_code(
    "schema-invalid",
    "schema",
    "a value does not match the schema",
    """
A schema rule other than type, key, choice, range or pattern failed, for example a list with
repeated items where items must be unique, or a value matching none of the shapes allowed
there. The message is the validator's own description.

    bad:   applies: chose            # neither 'chosen' nor {players: [...]}
    fix:   applies: chosen
""",
)
_code(
    "unknown-kind",
    "schema",
    "the document's 'kind' is not a known kind",
    """
The top-level 'kind' selects the schema a file is checked against. The message lists the known
kinds (game, nobles, court, flow, scoring, components, vocabulary, provenance, examples,
variant) and suggests the closest one.

    bad:   kind: scorign
    fix:   kind: scoring
""",
)
_code(
    "duplicate-kind",
    "schema",
    "a kind that may appear only once is defined in two files",
    """
Every kind but 'variant' describes one part of the whole game and must be unique. The error
points at the 'kind' of the second file (in path order) and a note at the first. Merge the
files.

    bad:   rules/game.yaml and rules/game2.yaml both say  kind: game
    fix:   keep one game file
""",
)
_code(
    "missing-kind",
    "schema",
    "a document has no top-level 'kind', or a kind the game needs has no document",
    """
Every rules file starts with a 'kind' that says what it describes, so it can be checked
against the right schema. The same code, without a position, reports a kind the game needs
(game, nobles, court, flow, scoring, components, vocabulary, provenance) for which no file
was found; it is not reported while another file could not be loaded or validated, since
that file may be the one.

    bad:   id: house-rules
    fix:   kind: variant
           id: house-rules
""",
)

# --- model: building the game model from validated documents -------------------------------

_code(
    "duplicate-id",
    "model",
    "two definitions share the same id",
    """
Ids must be unique within their namespace so that references are unambiguous: rule ids across
all files, the ids of Nobles, actions, costs, cards, Decrees, Plans and variants, and values
that act as keys (a vocabulary name, a Treasury space's value, a real icon's position). The
error points at the second definition and a note at the first. Rename or remove one. A
variant that names the same item twice in one list (two `- {id: visit-cost, ...}` entries) is
refused the same way: merge the two entries into one.

    bad:   - id: frame.years        # in game.yaml
           - id: frame.years        # again in nobles.yaml
    fix:   - id: nobles.years
""",
)
_code(
    "unknown-reference",
    "model",
    "a reference names an id that is not defined",
    """
A field that refers to another definition names an id that does not exist: a Noble, a State
or Noble action, a business, a deck, a cost, a flag, an assumption, a rule named by a variant's
callout or by a [[rule-id]] in rule text, a procedure a step does (`do: pay-reis`). The message
suggests the closest defined id.

    bad:   noble_action: build-stor
    fix:   noble_action: build-store
""",
)
_code(
    "unknown-name",
    "model",
    "an expression uses a name that is not defined",
    """
Formulas may only use the names listed in rules/vocabulary.yaml (which the engine must
provide), their own params, and max/min. The expressions of steps use the fields of
rules/state.yaml, the measures of rules/effects.yaml, the procedure's params and the names its
earlier steps bind (let, choose, for_each). The position points at the name inside the
expression; the message suggests the known name it may mean: one whose `aka:` in
rules/vocabulary.yaml lists the word (`money` -> `reis`), else the closest in spelling. A
vocabulary entry naming a value the engine does not provide gets the same code.

    bad:   condition: rubble_set >= sets
    fix:   condition: rubble_sets >= sets
""",
)
_code(
    "expr-syntax",
    "model",
    "an expression cannot be parsed",
    """
The text of a condition or formula is not a valid expression of the rules language (whole
numbers, names, + - * //, comparisons, and/or/not, max/min). The position points into the
expression where parsing stopped. A slip from other notations is named with what to write:
`=` for `==`, `&&` for `and`, `||` for `or`, `!` for `not`, `<>` for `!=`.

    bad:   formula: "2 * (treasury_value + 1"
    fix:   formula: "2 * (treasury_value + 1)"
    bad:   condition: game.period = 1
    fix:   condition: game.period == 1
""",
)
_code(
    "overlay-conflict",
    "model",
    "two variants change the same thing differently",
    """
When several variants can be in force together (two chosen ones, or a chosen one and one
that applies by player count), they must not change the same value, because the result would
depend on their order. The error points at the second change and a note at the first (at a
house rule's change, given with --house, when the other variant is one of rules/variants/).
Change different values, give two variants that apply by player count counts that do not
meet, or merge the two variants into one.

    bad:   house-a.yaml: changes: {game: {start: {reis: 12}}}
           house-b.yaml: changes: {game: {start: {reis: 14}}}
    fix:   one variant that sets reis
""",
)
_code(
    "unknown-variant",
    "model",
    "the requested variant does not exist",
    """
A `build --variant NAME` or `diff NAME` names no variant: NAME must be the id of a variant
document (one in rules/variants/). The message suggests the closest variant.

    bad:   lisboa-rules build --variant solo-mod
    fix:   lisboa-rules build --variant solo-mode
""",
)
_code(
    "fold-by-players",
    "model",
    "a variant that applies by player count cannot be folded into the base game",
    """
`build --variant NAME` folds a variant into the base game, for every player count. A variant
with `applies: {players: [...]}` is meant for those counts only, and the engine already applies
it by itself when that many play: folded in, a 3-player game would play by the 2-player rules
and the reference would print them for every count. Build without `--variant NAME` (a house rule
kept outside the rules folder still needs `--house FILE`), or, to fold a rule in for every
count, give it `applies: chosen`.

    bad:   lisboa-rules build --variant two-player      (applies: {players: [2]})
    fix:   lisboa-rules build
""",
)
_code(
    "overlay-unknown-target",
    "model",
    "a variant changes something that does not exist",
    """
A variant removes ({$remove: true}) a key or a list item that the base rules do not have, or
changes a kind of document the base rules do not have, so it would do nothing. Fix the target
or drop the change. (A change that sets an unknown key is an overlay-unknown-key instead.)

    bad:   triggers: [{id: period-end.rubbel, $remove: true}]
    fix:   triggers: [{id: period-end.rubble, $remove: true}]
""",
)
_code(
    "overlay-no-change",
    "model",
    "a part of a variant changes nothing",
    """
A variant's change that leaves the rules as they were: an empty map (`start: {}`), an empty
list merged onto a list of items (`costs: []`), a list item that only names its id
(`- {id: visit-cost}`). It is almost
always an edit that was meant to do something (the values were lost, or indented under the
wrong key), and it would build silently. The error points at the empty value or the item. Give
the values that change, or drop the entry. (To empty a plain list on purpose, `[]` onto a list
that has values is a change and is accepted; a variant whose whole `changes` is `{}` says
plainly that it changes nothing, the control of a paired `balance --compare`, and is accepted.)

    bad:   costs:
           - {id: visit-cost}
    fix:   costs:
           - {id: visit-cost, params: {per_official: 2}}
""",
)
_code(
    "unknown-source",
    "model",
    "a source names something the model does not provide",
    """
Every rule and value of rules/ says where it comes from in a `source` list, whose entries
must be ids listed under `sources` in rules/provenance.yaml (a seed section, a rulebook fact).
The message suggests the closest listed source. A house rule (a file given with --house) may
omit `source:` or say where its idea comes from in free text (`source: our table, 2026`); a
citation it gives (`seed:...`, `facts:...`) is still checked.

    bad:   source: [facts:§99]
    fix:   source: [facts:§9]
""",
)

_code(
    "state-type",
    "model",
    "a field of rules/state.yaml has a type that does not parse or does not fit",
    """
A field's `type` must be one of int, bool, text, seat, player, a kind declared under `kinds:`,
`list[T]` or `map[K, T]` (K a kind of text ids), each optionally followed by `?` (it may be
null). The position points into the type where it stops making sense. The same code marks a
key that does not fit the type (`min`/`max` on a field that holds no number, `max_items` on
one that is not a list, `full` on one that is not a map), a `default` that is not a value of
the type, a field with no default after one with a default, and a field id the engine keeps
for itself.

    bad:   {id: hand, type: "list[card", see: owner, text: the hand}
    fix:   {id: hand, type: "list[card]", see: owner, text: the hand}
""",
)
_code(
    "state-data",
    "model",
    "a kind's values or a field's bound are not in the rules data",
    """
A kind of rules/state.yaml takes its values `from` a path into the merged rules data
(`components.cards` with `key: number`, `game.players.colors`), and a field's `min`, `max` and
`max_items` may be data paths (`game.start.hand`). The path must name a value of the data: a
list (of items that all have the `key`) for a kind, a whole number for a bound. The message
suggests the closest key.

    bad:   {id: card, from: components.card, key: number, text: a card}
    fix:   {id: card, from: components.cards, key: number, text: a card}
""",
)

_code(
    "state-variant",
    "model",
    "a variant that is played by choice or by player count changes rules/state.yaml",
    """
The generated engine has one `Player` and one `Game` class, made from the base game's
declaration, which every rule set shares. A variant chosen at setup, or applied by player
count, cannot add or change what a player or the game holds: fold it into the base game
(a house rule: `lisboa-rules build --variant NAME`, checked with `lisboa-rules validate
--house FILE --variant NAME`), or move the field into rules/state.yaml.

    bad:   a chosen variant with changes: {state: {player: [{$add: true, id: coins, ...}]}}
    fix:   lisboa-rules build --variant NAME (the variant folded into the base game)
""",
)

_code(
    "state-invariant",
    "model",
    "an invariant of rules/state.yaml cannot be checked as written",
    """
An invariant of rules/state.yaml either `holds:` (a condition) or says a kind is `conserved:`
across the fields its ids live in. A conserved kind needs a list of ids (`from` or `values`);
each field `in:` must hold its ids: a list of them or a map of such lists (with `count:`, a list
of them or a map from them to a number), listed once. A kind is conserved once with each id
there once, and only such a conservation may name a `function:` listing its ids (a name not
taken already). An unknown field is an unknown-reference, with the closest field suggested.

    bad:   conserved: {kind: card, in: [game.discard, player.wigs]}
    fix:   conserved: {kind: card, in: [game.discard, player.hand]}
""",
)

_code(
    "state-visibility",
    "model",
    "who sees a field of rules/state.yaml is missing or cannot be kept",
    """
Every field of a player and of the game says who sees it (`see:`): `all`, `owner` (a player's
field: that player alone; the others see the size of a list), `count` (only the size of a list,
or of each list of a map), `top` (the size and the last item: the top of a pile) or `none`.
A view (`view(game, seat)`) shows a seat what it may see, and a bot fills in the rest at random
(`determinize`), so what is hidden must be something it can fill in: a list of a kind's ids
that a conservation (`conserved:` under invariants) names as one of its zones (with no
`count:`), a map of such lists, or a number (drawn between its min and max). `by:` names the
field of the kind's rows that each list of a hidden map is made of (a display pile of one
card type). At most one zone of a kind may be `none` (it holds what no other place does).

    bad:   - {id: bag, type: "list[tile]", text: the tiles in the bag}
    fix:   - {id: bag, type: "list[tile]", see: count, text: the tiles in the bag}
""",
)

_code(
    "hidden-read",
    "model",
    "an action lists its moves from what the player who moves may not see",
    """
The legal moves of a state are shown to the player who moves, and that player's bots list them
on a game dealt from what the player sees (`determinize`). So the options of a choice, its
`where:`, a `require:` and the condition of an `if:` that decides which moves are listed read
only what the mover sees (rules/state.yaml `see:`): the size of a hidden list (`len(...)`,
where its `count` or `top` shows), the top of a pile whose top shows (`xs[-1]`), the mover's
own fields (`see: owner`) and everything seen by `all`. A choice from a face-down deck would
list its cards and tell the player what is in it, or which is on top.

    bad:   - choose: {as: d, from: game.decree_deck}        # see: count
    fix:   - choose: {as: d, from: game.decree_display}     # face up
""",
)

# --- model: the steps of effects, procedures, hooks and Noble actions (lang/steps.py) --------

_code(
    "step-shape",
    "model",
    "a step does not have the form of its kind",
    """
A step of a procedure (rules/effects.yaml, a Noble action's `steps:`) is a mapping with exactly
one effect key: gain, set, let, move, require, choose, if, for_each, repeat, do or raise, beside
its own words (`text`), an optional `id` and `rule`. The value of the effect key has the form of
its kind: `gain: {PLACE: EXPR}`, `move: {item|top|first|all: EXPR, from: PLACE, to: PLACE}`,
`choose: {as: NAME, from: EXPR}`, `raise: EVENT`. A step with two effect keys (or none) is two
steps written as one: split it. The same code marks a parameter type that does not parse
(`params: {amount: "int."}`) and steps nested more than six levels deep (name a procedure and
`do` it instead).

    bad:   - {gain: {reis: 2}, do: rubble, with: {amount: 1}}
    fix:   - {gain: {reis: 2}}
           - {do: rubble, with: {amount: 1}}
""",
)
_code(
    "step-unknown-key",
    "model",
    "a step has a key its kind does not take",
    """
Beside its effect key and the keys every step may have (id, text, rule, source, assumptions), a
step takes only the keys of its kind: `then`/`else` for an if, `do` for a for_each or a repeat,
`reason` for a require or a choose (and `count_rule`/`count_reason` for a choose of several),
`with` for a do. A key of another kind usually means a step was merged into its neighbour, or
the effect key is misspelt. The same code marks a `with` argument the procedure does not take.
The message suggests the closest key.

    bad:   - {gain: {reis: 2}, reason: you need réis}
    fix:   - {gain: {reis: 2}, text: Take 2 réis.}
    bad:   - {do: pay-reis, with: {amont: 2}}
    fix:   - {do: pay-reis, with: {amount: 2}}
""",
)
_code(
    "step-order",
    "model",
    "a step stands where its kind cannot",
    """
A procedure's chooses and requires come first (its guard: what the player picks, and the
conditions that refuse the move); its effects follow. The engine lists the legal choices from
the guard before anything changes, so a require or a choose after an effect, or inside an if
or a loop, cannot be checked in time. Move it up, or split the procedure in two. A hook (it
reacts to an event and cannot refuse it) has no guard, and a procedure with a guard cannot be
carried out with `do` from another one.

    bad:   steps: [{gain: {reis: -2}}, {require: reis >= 2, reason: you lack réis}]
    fix:   steps: [{require: reis >= 2, reason: you lack réis}, {gain: {reis: -2}}]
""",
)
_code(
    "step-target",
    "model",
    "a step changes something that is not a field of the state",
    """
The places a gain, set or move writes to must be fields declared in rules/state.yaml (of the
player, `reis`, `stores[business]`, or of the game, `game.offices[noble][color]`), or an entry
of one: a measure, a table of the rules data, a name bound by let or choose or a number cannot
be changed by a step. The message names the place; check its spelling against rules/state.yaml,
or declare the field there.

    bad:   - {gain: {treasury_value: 1}}
    fix:   - {gain: {game.treasury: 1}}
""",
)
_code(
    "step-cycle",
    "model",
    "procedures carry each other out in a loop",
    """
A procedure that does itself, directly, through other procedures (`do:`), or through the hooks
of an event it raises, would never end. The message shows the loop; the position is the step
that closes it. Break it: one of the procedures must not do (or raise) the other.

    bad:   a: [{do: b}]   b: [{do: a}]
    fix:   a: [{do: b}]   b: [{gain: {reis: 1}}]
""",
)
_code(
    "step-not-conserved",
    "model",
    "a step takes a conserved component out of the game, or brings one in",
    """
rules/state.yaml declares kinds whose every id is in exactly one of some zones (`invariants:`
with `conserved: {kind: card, in: [game.discard, player.hand, ...]}`). The engine refuses a
saved game that breaks that, and one where a legal move would break it: a house rule whose
action loses a card built clean, but no game where the action could be played would load. The
error points at the step: a move from a zone to a list of that kind that is not a zone (or the
other way), the top or first items of a zone moved without a `to:`, an item taken from a zone
without a `to:` that no later step puts into a zone on every path (here, or in a procedure done
with the item, `do: to-portfolio, with: {card: card}`, or a hook of an event raised with it, or
through a `let` naming it), an item chosen from a zone and put into another one while it is
still there (a move without `from:`, or a procedure that puts it: the item would be in two
zones), or a `set:` of a zone. A loop runs as many times as its count says when that is a
constant (`repeat: 1`, `repeat: rules.X`, `for_each` over a list of the rules data): once, its
steps are read as if they stood in its place; twice or more, a second pass is read too (an
item put in each pass would be in two zones); any other loop may not run at all. Give the move a
`to:` among the zones (`game.box` for a card out of play), or add the list to the invariant's
`in:`. Not read by this check, and left to the engine's check of saved games: a `move: {all:
..., from: ZONE}` without `to:` and a `drop:` of a zone's entry (the rules use them where the
zone is already empty), kinds conserved by count, and the setup and the procedures only it
carries out.

    bad:   - {move: {item: card, from: hand}}                  # the card is gone
    fix:   - {move: {item: card, from: hand, to: game.box}}
""",
)
_code(
    "step-breaks-law",
    "model",
    "a `set:` outside the setup replaces a number a conservation law of the state keeps",
    """
An invariant of rules/state.yaml whose `holds:` is one equation is a conservation law (the
base rules' `officials-conserved`: a player's Officials in the supply, the offices and the
plazas add up to the number each player starts with): the numbers it reads change only
together, by amounts that cancel. A `set:` of one of them, outside the setup, whose value
does not read the field itself puts a number there whatever the rest holds, so the equation
holds after it only by chance:
refused at the step, with a note where the invariant is declared. In the setup, a player's own
numbers are given by the `new:` that makes the player, so a `set:` of one of them is refused
there too. When the equation is a sum
of numbers of the state (with signs) on one side and of the rules' data on the other, the
`gain:` steps of each list of steps must cancel too: summed with their terms' signs and grouped
by the amount as written (`n` and `-n` cancel, numbers add up), what is left is refused at the
first of them. Change the number with `gain:` by an amount the steps take from (or put into)
what else the equation counts, in the same list of steps, as the base rules' Officials step
does. A player the setup makes (`new:`) must satisfy the laws of each player that read only
its own numbers and the rules' data, computed with the values its `with:` gives and the
declared defaults of the rest (a new player with none of the Rubble Set markers `markers-left`
wants is refused), unless another step of the setup writes what the law reads. Not read by
this check: a law that is not such a sum (`markers_left == max(0, ...)`), a
`set:` relative to the field (`officials - n`), a take and a put in different procedures, a
gain clamped at a bound, and the setup: the engine checks every state's invariants, and
`validate --play` plays games that find a law a rule breaks.

    bad:   - {set: {officials: 99}}
           - {gain: {officials: 1}}
    fix:   - {gain: {officials: -n, "game.offices[noble][color]": n}}
""",
)
_code(
    "query-kind",
    "model",
    "an argument of a query is of no kind the engine can check",
    """
Each argument of a query (`queries:` in rules/vocabulary.yaml) is checked by the generated
engine before the query's value is read: a `seat` of the game, a `player` of it, a `count` (a
whole number from 0), an `int`, or an id of a kind of rules/state.yaml (`kinds:`). Another
kind could not be checked; the message suggests the closest known one.

    bad:   args: [{name: noble_id, kind: nobel}]
    fix:   args: [{name: noble_id, kind: noble}]
""",
)
_code(
    "query-name",
    "model",
    "a query or an argument of it has a name the engine cannot give it",
    """
A query becomes a public function of the generated engine, and its arguments the function's
parameters. A query named as a function or a table the engine has already (`legal_moves`,
`new_game`), as a Python keyword or built-in (`len`), or as another query would replace it;
an argument named as a Python keyword or built-in, `g` (the game), as another argument, or `p`
(the acting player, but for an argument of kind `player`), or starting with `v_`, would hide
a name the function's code reads. Rename it.

    bad:   queries: [{name: legal_moves, args: [], value: players, words: ...}]
    fix:   queries: [{name: player_count, args: [], value: players, words: ...}]
""",
)
_code(
    "step-missing",
    "model",
    "a step leaves out something it needs",
    """
A `do` of a procedure gives every parameter that procedure declares (`params:`) in its `with`,
unless the parameter's type ends in `?` (it may be null, and is then null). The message names
the missing parameter; the position is the step's `with` (or the step, when it has none).

    bad:   - {do: pay-reis}
    fix:   - {do: pay-reis, with: {amount: price}}
""",
)

# --- check: semantic checks over the model -------------------------------------------------

_code(
    "expr-type",
    "check",
    "an expression has the wrong type",
    """
The expression parses but combines values of incompatible types, or yields the wrong type for
its place: a condition (a trigger, a Decree, `eligible`, a step's require or if) must be true
or false, a cost, land price, measure or the amount of a gain a number.

    bad:   formula: "wigs_per_influence * (cost > influence)"
    fix:   formula: "wigs_per_influence * max(0, cost - influence)"
    bad:   - {require: reis + 1, reason: you lack réis}
    fix:   - {require: reis >= 1, reason: you lack réis}
""",
)
_code(
    "unknown-placeholder",
    "check",
    "rule text uses a placeholder that is not defined",
    """
Rule text may contain {placeholders}: a path looked up first in the object holding the text
({params.sets}), then in the documents ({game.start.hand}), with an optional filter
(|ordinal, |count, |chain). This one names no value, names a value that cannot be printed
(a mapping), names one that prints no words (a list a variant emptied: "The spaces show a
real icon."), or uses an unknown filter. The message suggests the closest path.

    bad:   text: "Pay {params.per_oficial} per Official."
    fix:   text: "Pay {params.per_official} per Official."
""",
)
_code(
    "missing-text",
    "check",
    "a rule has no text for the printed reference",
    """
The printable rules reference is generated from the text in the data; a rule the engine
carries out without text would leave a hole in the rulebook, and a leftover marker (TODO, TBD,
FIXME, XXX, ???, or an unmatched {{ }}) would be printed as is. Write the text.

    bad:   text: "Pay the Treasury value. TODO"
    fix:   text: "Pay the Treasury value."
""",
)
_code(
    "text-missing",
    "check",
    "the players' edition needs words the data does not give",
    """
The players' edition says every step in words from the rules, never in the engine's terms:
a `require` with no `text:` prints its `reason:` as the condition of the steps it guards. A
reason that shows a value only known during play (`{price}`, `{fee}`) has no words for it on
the page unless the vocabulary names it (a `names:` entry with `words:`); the page would
print a guess such as "the fee". Give the step its condition in words with `text:` (the
reason stays the engine's message), or name the value in rules/vocabulary.yaml.

    bad:   - require: reis + influence_reis >= fee
             reason: the petition costs {fee} réis and you cannot pay it
    fix:   - require: reis + influence_reis >= fee
             reason: the petition costs {fee} réis and you cannot pay it
             text: you cannot pay the petition cost
""",
)
_code(
    "value-out-of-range",
    "check",
    "a value is outside what the rest of the rules allow",
    """
A value is valid on its own but inconsistent with other rules, for example a Treasury start
value that no Treasury space shows, majority columns beyond a table's prizes, a starting deck
too small for the most players, or years that do not add up. Notes point at the values it is
checked against.

    bad:   spaces: [{value: 1}, ..., {value: 6}]   start_value: 9
    fix:   start_value: 6
""",
)
_code(
    "unused-value",
    "check",
    "a defined value is never used",
    """
A parameter is defined but neither its formula (or condition) nor its rule text uses it, so
changing it would change nothing. This is only a warning: it often means a formula has a typo
or a rule was rewritten.

    bad:   params: {per_official: 1, bonus: 2}   formula: per_official * other_officials_in_office
    fix:   use bonus in the formula, or delete it
""",
    severity="warning",
)
_code(
    "unread-key",
    "check",
    "an action's key is read by none of its steps",
    """
The engine runs only steps: a key of an action (rules/court.yaml `actions`) other than its
names, move, phase, steps, words and provenance is data its steps read as `this.KEY`
(`cost(this.cost)`, `open: this.followable`, `apply: {effects: this.reward}`), and so is a key
of a Noble action (rules/nobles.yaml `noble_actions`) other than those and its
`forbidden_by_flag`, `land_price`, `params` and `ranges` (`this.lots`, `this.rubble`). A key
that none of the action's steps reads would be printed by the reference and ignored in play,
so it is
an error where the key is written (where a param nothing reads is only `unused-value`, this
one would tell the players a rule the game does not play). The notes point at the steps of
other actions that read the same key: the kind of step the action would need.

    bad:   - id: pass  ...  reward: {reis: 1}   (no step of Pass reads this.reward)
    fix:   add `- {apply: {effects: this.reward}}` to its steps, or remove `reward`
""",
)

# --- emit: rendering the engine and the reference ------------------------------------------

_code(
    "generated-invalid",
    "emit",
    "a generated Python file does not compile",
    """
A template produced Python code that does not compile; the position is in the generated
file. This is a bug in lisboa-rules (or in a template), not in your rules: nothing was
written. Please report it with the message.

    bad:   generated/lisboa_engine.py:12:5: invalid syntax
    fix:   report it; run with LISBOA_RULES_DEBUG=1 for details
""",
)
_code(
    "template-error",
    "emit",
    "a template failed to render",
    """
A template referred to a missing value or raised an error while rendering, or the reference
met data it cannot print (for example a worked example that the generated engine cannot
play). Usually a bug in lisboa-rules or a template; when the message names your data, fix
that. Nothing was written.

    bad:   'EngineView object' has no attribute 'cots'
    fix:   report it (run with LISBOA_RULES_DEBUG=1 for details)
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
    "unsafe-output",
    "write",
    "the output folder is one a build must not replace",
    """
A build replaces the whole output folder with a new one. It refuses a folder where that could
lose or move files lisboa-rules did not write: the root of the file system, your home folder,
the rules folder or a folder that contains one of these, the current directory or one of its
ancestors (you would be left in a deleted directory), and a folder holding an entry it cannot
carry over: a folder it cannot list, a file it cannot read, a FIFO, socket or device. Nothing
was written.

    bad:   lisboa-rules build --out .
    fix:   lisboa-rules build --out generated   (a folder of its own)
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
_code(
    "stale-output",
    "write",
    "an output file is out of date with the rules (build --check)",
    """
`lisboa-rules build --check` found an output that a build would write, change or remove: the
output folder was not rebuilt after the rules or the compiler changed. With `--format json`
each such file is one diagnostic, at the file.

    bad:   rules/court.yaml edited, generated/ not rebuilt
    fix:   lisboa-rules build
""",
)
_code(
    "overlay-unknown-key",
    "model",
    "a variant changes a key that what it changes does not have",
    """
Every key a variant changes must exist in the base rules it is laid over, so that a misspelt
key (`set` for `sets`, `per_oficial`) cannot slip in next to the real one, which would keep its
old value. The message names the key and suggests the closest one. A key that is new on
purpose is written `key: {$add: VALUE}`; $add on a key the base already has is an error too. A
key the place never takes (an action has no `params:`) is told with the keys it does take.

    bad:   - {id: period-end.rubble, params: {set: 3}}
    fix:   - {id: period-end.rubble, params: {sets: 3}}
    new:   - {id: take-decree, forbidden_by_flag: {$add: my-flag}}
""",
)
_code(
    "overlay-unknown-item",
    "model",
    "a variant changes a list item the base rules do not have",
    """
A list item in a variant names an id (or number) that the list does not have, so it would be
appended as a new, incomplete item. The message names the list and suggests the closest id. A
new item is written in full, with `$add: true`; $add on an id the list already has is an error.

    bad:   costs: [{id: visit-costs, params: {per_official: 2}}]
    fix:   costs: [{id: visit-cost, params: {per_official: 2}}]
    new:   flags: [{$add: true, id: my-flag, name: My house flag, text: ...}]
""",
)
_code(
    "text-stale",
    "check",
    "a variant changes a rule's values but not the words that print them",
    """
A variant changes a rule's formula, params or structure (any field but its names, labels and
provenance), and one of the rule's texts (`text`, the player aid's `short`, `steps`, `plays`,
`intro`) neither prints the changed value through a placeholder nor is changed by the same
variant (nor addressed by one of its callouts). The reference would print the old rule next to
the new numbers. The rule of a change is the innermost item with an `id` (or `number`) that
holds the value; a placeholder `{formula}` (or `{condition}`, ...) prints the formula in words
with its params, `{params.x}` prints x. The message names each text by its key (`text:`,
`short:`), quotes it, and says what to change: a new value printed through a placeholder, or,
for a new formula, the texts given anew in the same variant (a `{params.x}` the new formula no
longer reads is named: it would print a number the rule no longer uses). One change gives one
error, and none when the change itself is refused (a formula that does not parse).

The steps below a rule have words of their own: a step that reads a changed number
(`this.NAME` in its code) and whose text still states the old number (in digits, as a number
word, or as "a ... per/each" for 1) without printing it as `{NAME}` is stale too ("Score a wig
per Official it shows." under `wigs_per_official: 2`). A step whose words never state the
number ("Take the rubble cubes.") is not.

An item with steps and no words of its own that names its rule (`rule:`, as the moves of
rules/flow.yaml do) is worded by that rule: a change of its steps must also change that rule's
text (or address it with a callout), when the rule is in the same file ("each player may discard
any number of cards" under a hand discard bounded to 2 cards).

    bad:   - {id: score.ships, formula: 2 * ship_hull_total}
    fix:   - {id: score.ships, formula: 2 * ship_hull_total,
              text: Each Ship in your portfolio scores twice its hull size.,
              short: Twice the total of their hull sizes}
""",
)

# --- check: ranges of formulas (interval analysis) -----------------------------------------

_code(
    "cost-unbounded",
    "check",
    "a step may do more work, or a choice list more moves, than the compiler allows",
    """
Every `repeat`, `range`, comprehension, loop and `choose` gets a bound from what the rules
declare: a number written or read from the rules data, a field's `min`/`max` and a list's
`max_items` (rules/state.yaml), a conserved kind's ids. A step whose work in one run (the items
its loops, repeats, ranges and comprehensions go through, multiplied through the steps inside
it) is over 1,000,000, or a choice whose moves (one of n items: n; a set of up to k of n: the
sum of C(n, i)) are over 10,000, would hang the engine, or the build that runs it. The message
prints the bound the compiler computed; the limits are in lisboa_rules/core/limits.py.

    bad:   repeat: 99999999999999
    fix:   repeat: rules.game.start.royal_favors
    bad:   choose: {as: cards, from: game.discard, up_to: 40}
    fix:   choose: {as: cards, from: hand, up_to: len(hand)}    # hand: max_items 5
""",
)

_code(
    "divisor-not-positive",
    "check",
    "a formula divides by a value that can be 0 or negative",
    """
Every `//` in a formula needs a divisor that is at least 1 for every value the names it reads
can take. The compiler works out the divisor's range from the params' values and the ranges
declared in rules/vocabulary.yaml (`range: [low, high]`, bounds from the rules data); a divisor
whose range includes 0 or negative numbers would crash the engine. Give the param a positive
value, or divide by something that cannot be 0, e.g. max(1, ...).

    bad:   params: {reis_per_wig: 0}          # formula: (reis + influence_reis) // reis_per_wig
    fix:   params: {reis_per_wig: 5}
    bad:   formula: reis // wigs              # wigs can be 0
    fix:   formula: reis // max(1, wigs)
""",
)
_code(
    "engine-failed",
    "check",
    "a seeded game of the engine built failed",
    """
`validate` and `build` play a few seeded games of every rule set they compile on the engine
they built (`--play N`, default 2 at each player count: one random, one greedy), before
anything is written. A game that raises, breaks an invariant of rules/state.yaml, reaches a
state with no legal move, or does not end is this error, at the rule the failing step is
written at when the engine names it (a game that does not end: at the act a variant wrote that
its last moves made most often, else, when no trigger that ends the game fired, where the
triggers that end the game are written or a variant changed them), with the seed, the player
count and the last moves. The
compiler's static checks (total operations, bounded cost) are meant to refuse such a rule where
it is written; this backstop catches what they miss. Reproduce it with the seed and the agent
the message names (`lisboa_rules.sim.agents.make_agent`), and fix the step.

    bad:   set: {officials: 99}          # breaks the conservation rules/state.yaml declares
    fix:   gain: {officials: 1}          # Officials come from the supply the state counts
""",
)
_code(
    "divisor-zero",
    "check",
    "a step divides by a value that can be 0",
    """
A `//` or `%` in a step of the effect language needs a divisor that cannot be 0 for any value
the names it reads can take (a division by 0 would stop the engine in play). The compiler
works out the divisor's values from the bounds the state declares (rules/state.yaml `min:` and
`max:`), the number of players the rules allow, the values a local was bound to, and what the
steps before it say (`require: n > 0`, the test of the `if` it is in, the condition before an
`and`). Divide by something that cannot be 0, or require it first.

    bad:   let: {each: "reis // len(hand)"}           # the hand can be empty
    fix:   let: {each: "reis // max(1, len(hand))"}
    fix:   require: len(hand) > 0                      # a step before it
""",
)
_code(
    "partial-operation",
    "check",
    "a step reads an item a list may not hold",
    """
`first(xs)`, `min(xs)` and `max(xs)` need a list that holds an item, and `xs[i]` an index
within the list (`-1` is its last item). The compiler proves it from the rules (a constant list
of the rules data, computed for each value the names it reads can take; a list that a
`require`, the `if` it is in, a `choose` from it or the loop it is in says holds an item;
`range(len(xs))` and `e % len(xs)` as indexes of xs), or refuses the step: the engine never
stops in play on an empty list. Write the operation total, or say it holds first.

    bad:   let: {top: "first(hand)"}
    fix:   let: {top: "first(hand, None)"}              # the default of an empty list
    fix:   require: len(hand) > 0                       # a step before it
    bad:   let: {last: "game.court[-1]"}
    fix:   let: {last: "game.court[-1] if len(game.court) > 0 else None"}
""",
)
_code(
    "items-over-max",
    "check",
    "a step puts more items into a list than its max_items allows",
    """
A list of the state that declares `max_items` (rules/state.yaml: a hand of at most the hand
size) holds at most that many items in every state: the compiler bounds the work of the steps
that go through it by it, and a saved game with more is refused. Each step that adds items to
such a list (a `move` into it, a `new` record, a `set` of it) is proven to keep it within the
bound from what the rules say where it is: the length the list can have there (at most its
max_items, less what a `require`, an `if` or the steps before it say) and the count it moves
(`top: N - len(hand)` for each length). A step that goes over from every length the list can
have, or whose own count goes over (it moves more items than there is room for as soon as
its source holds them), is this error. A step neither proven nor refused is checked by the
engine where it writes: it fails there, naming the rule, before the list goes over, and the
build's seeded games (`--play`) report that as `engine-failed` at the step.

    bad:   - {move: {top: 6, from: "game.piles[pile]", to: hand}}    # hand: max_items 5
    fix:   - {move: {top: 1, from: "game.piles[pile]", to: hand}}
    bad:   - move: {first: rules.game.start.hand + 2, from: "game.reserve[start_deck]", to: q.hand}
    fix:   - move: {first: rules.game.start.hand, from: "game.reserve[start_deck]", to: q.hand}
""",
)
_code(
    "formula-out-of-range",
    "check",
    "a cost or price formula can be negative",
    """
An amount paid (a cost in court.yaml, a Noble action's land price) must be at least 0 for
every value the names it reads can take, or paying it would raise a player's Influence or
money, past the end of the track. The compiler works out the formula's range from the params'
values and the ranges declared in rules/vocabulary.yaml. Raise the minimum, or bound the
formula with max(0, ...).

    bad:   params: {minimum: -1, per_official: 1}  # max(minimum, influence_modifier + ...)
    fix:   params: {minimum: 0, per_official: 1}
""",
)
_code(
    "trigger-never-fires",
    "check",
    "a trigger's condition can never hold",
    """
A trigger (rules/flow.yaml `triggers`) fires when its condition holds. The compiler works out
the values the condition's names can take from the ranges declared in rules/vocabulary.yaml
(`range: [low, high]`, bounds read from the rules data) and its params' values; a condition
that is false for every one of them can never hold, so the trigger never ends its period or
the game and never does its steps, while the reference prints it as a rule. The message gives
the range of each name the condition reads, and a note points at where each is declared.
Change the condition or its params so that a value in range makes it hold, or remove the
trigger (`$remove: true` in a house rule).

    bad:   condition: players > 4        # players is 2..4: never more than 4
    fix:   condition: players > 3
""",
)
_code(
    "trigger-always-fires",
    "check",
    "a trigger's condition holds whatever the names it reads are",
    """
A trigger whose condition reads names of rules/vocabulary.yaml but holds for every value
their declared ranges (and its params' values) allow fires as soon as the triggers are first
checked in its periods, whatever the players do: the comparison says nothing. Most often a
param or a bound is off by one (`>= 0` for a count that is never below 0). Write a condition
that can be false.

    bad:   condition: players >= 2       # players is 2..4: always at least 2
    fix:   condition: players >= 3
""",
)
_code(
    "turn-order-skips",
    "check",
    "the turn order does not go through every seat and back to the start player",
    """
rules/flow.yaml `turn_order.next` gives the seat that plays after `seat` (taken modulo the
number of players), and a round ends when the turn comes back to the start player. When
`next` reads only `seat`, the number of players and constants of the rules, the compiler
computes it for every seat at every player count the rule set is played with, and follows
the turn from the first player (`turn_order.first`, else seat 0): the turn must pass through
every seat once and come back to the start player. Otherwise some players never take a turn,
or the turn never comes back and a round never ends. The message names the player count and
the seats the turn goes through. (A `next` that reads more of the state is checked by the
build's seeded games.)

    bad:   next: (seat + 2) % len(game.players)    # with 4 players: 0, 2, 0, ...
    fix:   next: (seat + 1) % len(game.players)
""",
)

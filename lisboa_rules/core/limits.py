"""The limits of cost the compiler holds every rule set to (issue 33, "bounded cost"): the one
place they are written. The rules data names none of them; the docs' "Bounded cost"
(docs/explanation/rules-data.md) states them with the base game's own figures, which fit with
a wide margin.

- `MAX_MOVES`: the moves of one decision, a `choose` step's bound (one item of n: n; a set of
  lo..hi of n: the sum of C(n, i)). The base game's largest is 300 (Take a Decree: 1 or 2 of
  the 24 Decrees), 33 times under it.
- `MAX_WORK`: the work of one step, counted in the expressions it evaluates and the items its
  loops, comprehensions, ranges and repeats go through, the bounds of each multiplied through
  the steps inside it. The base game's largest step is 2,678 (the setup's shuffle of the decks),
  more than 300 times under it.
- `UNDECLARED_ITEMS`: how many items a list of the state is taken to hold where nothing
  declares its size: no `max_items` in rules/state.yaml, and no conserved kind (each id in one
  place) whose ids it holds. A list of a conserved kind holds at most the kind's ids (the
  discard: the 82 Political cards); declaring `max_items` makes the bound exact.
- `UNDECLARED_NUMBER`: how large a number of the state is taken to be where nothing declares
  its `max` (a player's réis or wigs): the base game's own are far under it.

The compiler's own evaluation of rule expressions where the rules are compiled (constant
folding, `ir/const.py`) stops at `MAX_WORK` too, before doing more.
"""

from __future__ import annotations

MAX_MOVES = 10_000
# the backstop's seeded games of each rule set at each player count (`--play`, sim/backstop.py)
PLAY_GAMES = 2
# the CPU seconds one backstop game may take (the base game's take under 2 s): a step the cost
# bounds could not see as long (a count whose bound is unknown) is stopped and reported
PLAY_SECONDS = 60
MAX_WORK = 1_000_000
UNDECLARED_ITEMS = 100
# how large a number of the state is taken to be where nothing declares its `max` (réis,
# wigs): counts read from it (`repeat: reis`) are bounded so; declaring `max` makes it exact
UNDECLARED_NUMBER = 1_000
# the integers a save holds (signed 64-bit, as JSON readers keep them); the engine's runtime,
# which the compiler reads as text, writes the same range as its _INT_MIN and _INT_MAX
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

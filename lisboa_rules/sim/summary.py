"""`simulate`'s summary: the records of random games (runner.GameRecord) summed up in seed
order, and as plain data (its JSON; the command prints the text). Only totals are kept, never
the records, so a run of a million games keeps a few numbers per game."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lisboa_rules.sim.runner import GameRecord


@dataclass
class Summary:
    """Totals over the games, in seed order; averages are taken at the end."""

    games: int = 0
    moves: int = 0
    turns: list[int] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)  # summed over the players
    track: int = 0
    total: int = 0
    fired: dict[str, int] = field(default_factory=dict)
    wins: list[int] = field(default_factory=list)
    shared_wins: list[int] = field(default_factory=list)

    @classmethod
    def of_players(cls, players: int) -> Summary:
        """An empty summary of games of `players` players."""
        return cls(wins=[0] * players, shared_wins=[0] * players)

    def add(self, r: GameRecord) -> None:
        self.games += 1
        self.moves += r.moves
        self.turns.append(r.turns)
        self.rounds.append(r.rounds)
        for points in r.sources:  # each seat's points per source
            for k, v in points.items():
                self.sources[k] = self.sources.get(k, 0) + v
        self.track += sum(r.track)
        self.total += sum(r.totals)
        for t in r.fired:
            self.fired[t] = self.fired.get(t, 0) + 1
        for seat in r.first:
            self.wins[seat] += 1
            if len(r.first) > 1:
                self.shared_wins[seat] += 1

    def add_all(self, records: list[GameRecord]) -> None:
        """Add a chunk's records (an executor's sink)."""
        for r in records:
            self.add(r)


def _stats(values: list[int]) -> dict[str, float | int]:
    return {"mean": round(sum(values) / len(values), 2), "min": min(values), "max": max(values)}


def summary_data(E: Any, s: Summary, players: int, variants: tuple[str, ...],
                 seed: int) -> dict[str, Any]:
    """The summary as plain data."""
    rs = E.RULESETS[variants]
    per_player = s.games * players
    ends = {t.id: t.ends for t in rs.triggers}
    colors = list(rs.colors[:players])
    return {
        "games": s.games,
        "players": players,
        "variants": list(variants),
        "seed": seed,
        "length": {"turns": _stats(s.turns), "rounds": _stats(s.rounds),
                   "moves": round(s.moves / s.games, 2)},
        "score_per_player": {
            "track": round(s.track / per_player, 2),
            "sources": {src.id: {"name": src.name,
                                 "mean": round(s.sources.get(src.id, 0) / per_player, 2)}
                        for src in rs.scoring},
            "total": round(s.total / per_player, 2),
        },
        "triggers": {
            kind: {t: n for t, n in sorted(s.fired.items()) if ends.get(t) == kind}
            for kind in ("period", "game")
        },
        "wins": [{"seat": i, "color": colors[i], "wins": s.wins[i],
                  "shared": s.shared_wins[i]} for i in range(players)],
    }


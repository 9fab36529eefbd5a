"""The balance report: records of games -> plain data (JSON), text and HTML.

The data of one rule set (`rule_set_data`), keys in this order:

    games, players, variants   what was played
    seats      per seat: wins (first place, shared ones included), shared, win_rate, ci95
    balance    1 - the largest gap between two seats' win rates
    agents     per agent: games (seats it played), wins, win_rate, ci95
    versus     per pair of agents A, B: how often A finished above B in the games they shared
               (a tie counts half), with its ci95
    length     turns, rounds, moves: mean, sd, q05, q50, q95
    score      track (points on the score track at the end), total: the same figures, per
               player and game
    sources    per scoring source of the data: its name and the same figures
    margin     the winner's total minus the next best (0 when first place is shared)
    lead_changes  how often the leader changed (the score estimate at the end of each turn)
    triggers   period / game: per end trigger of the data, the games in which it fired
    never_reached  the end triggers that never fired; rare: those that fired in under 1%

Rates and intervals are fractions of 1; intervals are Wilson 95% intervals. `compare_data`
gives, for two rule sets played on the same seeds, the paired differences (other - base) of
each figure, with a 95% interval (stats.paired).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lisboa_rules.sim import stats
from lisboa_rules.sim.runner import GameRecord

RARE = 0.01  # a trigger that fires in fewer games than this is called rare


@dataclass(frozen=True)
class RuleSetInfo:
    """What the report needs to know of a rule set (read from the engine's RULESETS)."""

    name: str
    variants: tuple[str, ...]
    colors: tuple[str, ...]
    triggers: tuple[tuple[str, str], ...]  # (id, what it ends: "period" or "game")
    sources: tuple[tuple[str, str], ...]  # (id, name)


def info_of(engine: Any, name: str, variants: Sequence[str]) -> RuleSetInfo:
    rs = engine.RULESETS[tuple(variants)]
    return RuleSetInfo(
        name,
        tuple(variants),
        tuple(rs.colors),
        tuple((t.id, t.ends) for t in rs.triggers),
        tuple((s.id, s.name) for s in rs.scoring),
    )


def _rate(wins: float, n: int) -> dict[str, Any]:
    lo, hi = stats.wilson(wins, n)
    return {
        "games": n,
        "wins": wins,
        "win_rate": stats.rounded(wins / n if n else 0.0),
        "ci95": [stats.rounded(lo), stats.rounded(hi)],
    }


def _per_player(records: Sequence[GameRecord], key: str) -> list[float]:
    out: list[float] = []
    for r in records:
        out += getattr(r, key)
    return out


def rule_set_data(
    info: RuleSetInfo, records: Sequence[GameRecord], agents: Sequence[str]
) -> dict[str, Any]:
    """One rule set's figures (see the module's docstring)."""
    n = len(records)
    players = len(records[0].totals) if records else 0
    seats = []
    for seat in range(players):
        wins = sum(1 for r in records if seat in r.first)
        shared = sum(1 for r in records if seat in r.first and len(r.first) > 1)
        lo, hi = stats.wilson(wins, n)
        seats.append(
            {
                "seat": seat,
                "color": info.colors[seat] if seat < len(info.colors) else "",
                "wins": wins,
                "shared": shared,
                "win_rate": stats.rounded(wins / n if n else 0.0),
                "ci95": [stats.rounded(lo), stats.rounded(hi)],
            }
        )
    rates = [
        wins / n if n else 0.0
        for wins in (sum(1 for r in records if seat in r.first) for seat in range(players))
    ]
    balance = stats.rounded(1 - (max(rates) - min(rates))) if rates else 1.0
    names = list(dict.fromkeys(agents))
    per_agent: dict[str, Any] = {}
    for a in names:
        played = won = 0
        for r in records:
            for seat, who in enumerate(r.lineup):
                if who == a:
                    played += 1
                    won += seat in r.first
        per_agent[a] = _rate(won, played)
    versus: dict[str, Any] = {}
    for a in names:
        for b in names:
            if a == b:
                continue
            met = 0
            score = 0.0
            for r in records:
                for sa, wa in enumerate(r.lineup):
                    for sb, wb in enumerate(r.lineup):
                        if wa == a and wb == b:
                            met += 1
                            pa, pb = r.places[sa], r.places[sb]
                            score += 1.0 if pa < pb else 0.5 if pa == pb else 0.0
            if met:
                versus.setdefault(a, {})[b] = _rate(score, met)
    sources: dict[str, Any] = {}
    for sid, sname in info.sources:
        values = [float(pts.get(sid, 0)) for r in records for pts in r.sources]
        sources[sid] = {"name": sname, **stats.summary(values)}
    triggers: dict[str, dict[str, int]] = {"period": {}, "game": {}}
    for tid, ends in info.triggers:
        triggers.setdefault(ends, {})[tid] = sum(1 for r in records if tid in r.fired)
    counts = {tid: triggers[ends][tid] for tid, ends in info.triggers}
    return {
        "games": n,
        "players": players,
        "variants": list(info.variants),
        "seats": seats,
        "balance": balance,
        "agents": per_agent,
        "versus": versus,
        "length": {
            "turns": stats.summary([r.turns for r in records]),
            "rounds": stats.summary([r.rounds for r in records]),
            "moves": stats.summary([r.moves for r in records]),
        },
        "score": {
            "track": stats.summary(_per_player(records, "track")),
            "total": stats.summary(_per_player(records, "totals")),
        },
        "sources": sources,
        "margin": stats.summary([r.margin for r in records]),
        "lead_changes": stats.summary([r.lead_changes for r in records]),
        "triggers": triggers,
        "never_reached": [t for t, c in counts.items() if c == 0],
        "rare": [t for t, c in counts.items() if 0 < c < RARE * n],
    }


def _mean_of(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def compare_data(
    base: RuleSetInfo,
    other: RuleSetInfo,
    a: Sequence[GameRecord],
    b: Sequence[GameRecord],
    agents: Sequence[str],
) -> dict[str, Any]:
    """The paired differences other - base, game by game (the same seeds and lineups)."""
    if [r.seed for r in a] != [r.seed for r in b]:
        raise ValueError("a paired comparison needs the same seeds on both sides")
    players = len(a[0].totals) if a else 0

    def pair(metric: Any) -> dict[str, Any]:
        return stats.paired([float(metric(r)) for r in a], [float(metric(r)) for r in b])

    seats = [{"seat": s, **pair(lambda r, s=s: s in r.first)} for s in range(players)]
    names = list(dict.fromkeys(agents))

    def agent_share(r: GameRecord, name: str) -> float:
        mine = [seat for seat, who in enumerate(r.lineup) if who == name]
        return sum(seat in r.first for seat in mine) / len(mine) if mine else 0.0

    ids = list(dict.fromkeys([s for s, _ in base.sources] + [s for s, _ in other.sources]))
    sources = {
        sid: pair(lambda r, sid=sid: _mean_of([p.get(sid, 0) for p in r.sources])) for sid in ids
    }
    triggers: dict[str, dict[str, Any]] = {"period": {}, "game": {}}
    for tid, ends in dict.fromkeys([*base.triggers, *other.triggers]):
        triggers.setdefault(ends, {})[tid] = pair(lambda r, tid=tid: tid in r.fired)
    base_rates = [_mean_of([s in r.first for r in a]) for s in range(players)]
    other_rates = [_mean_of([s in r.first for r in b]) for s in range(players)]
    b1 = 1 - (max(base_rates) - min(base_rates)) if base_rates else 1.0
    b2 = 1 - (max(other_rates) - min(other_rates)) if other_rates else 1.0
    return {
        "base": base.name,
        "other": other.name,
        "games": len(a),
        "seats": seats,
        "balance": {
            "base": stats.rounded(b1),
            "other": stats.rounded(b2),
            "diff": stats.rounded(b2 - b1),
        },
        "agents": {n: pair(lambda r, n=n: agent_share(r, n)) for n in names},
        "length": {
            "turns": pair(lambda r: r.turns),
            "rounds": pair(lambda r: r.rounds),
            "moves": pair(lambda r: r.moves),
        },
        "score": {
            "track": pair(lambda r: _mean_of(r.track)),
            "total": pair(lambda r: _mean_of(r.totals)),
        },
        "sources": sources,
        "margin": pair(lambda r: r.margin),
        "lead_changes": pair(lambda r: r.lead_changes),
        "triggers": triggers,
    }


# --- text ------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _ci(ci: Sequence[float]) -> str:
    return f"[{_pct(ci[0])}, {_pct(ci[1])}]"


def _fig(s: dict[str, Any]) -> str:
    return (
        f"mean {s['mean']:.2f}  sd {s['sd']:.2f}  q05 {s['q05']:g}  q50 {s['q50']:g}  "
        f"q95 {s['q95']:g}"
    )


def _diff(d: dict[str, Any], pct: bool = False) -> str:
    def f(x: float, sign: str = "") -> str:
        return f"{100 * x:{sign}.1f}%" if pct else f"{x:{sign}.3f}"

    mark = "  *" if d["significant"] else ""
    return (
        f"{f(d['base'])} -> {f(d['other'])}  diff {f(d['diff'], '+')}  "
        f"95% CI [{f(d['ci95'][0], '+')}, {f(d['ci95'][1], '+')}]{mark}"
    )


def text(data: dict[str, Any]) -> str:
    """The report as text."""
    run = data["run"]
    lines = [
        f"{run['games']} games, {run['players']} players, seeds {run['seed']}.."
        f"{run['seed'] + run['games'] - 1}, agents {', '.join(run['agents'])} "
        "(rotating one seat per game)"
    ]
    for name, d in data["rule_sets"].items():
        variants = ", ".join(d["variants"]) or "none"
        lines += [
            "",
            f"== {name} (variants: {variants}) ==",
            "",
            f"Win rate per seat (95% Wilson interval); balance {d['balance']:.3f}:",
        ]
        for s in d["seats"]:
            lines.append(
                f"  seat {s['seat']} {s['color']:<8} {s['wins']:>6} wins  "
                f"{_pct(s['win_rate']):>6}  {_ci(s['ci95'])}  ({s['shared']} shared)"
            )
        lines.append("Agents:")
        for a, s in d["agents"].items():
            lines.append(
                f"  {a:<12} {s['wins']:>6} of {s['games']:<6} {_pct(s['win_rate']):>6}"
                f"  {_ci(s['ci95'])}"
            )
        for a, row in d["versus"].items():
            for b, s in row.items():
                lines.append(
                    f"  {a} above {b}: {_pct(s['win_rate'])} {_ci(s['ci95'])} of {s['games']}"
                )
        lines.append("Game length:")
        for k, s in d["length"].items():
            lines.append(f"  {k:<8} {_fig(s)}")
        lines.append("Score per player:")
        for k, s in d["score"].items():
            lines.append(f"  {k:<8} {_fig(s)}")
        for sid, s in d["sources"].items():
            lines.append(f"  {s['name']} ({sid}): {_fig(s)}")
        lines.append(f"Winning margin: {_fig(d['margin'])}")
        lines.append(f"Lead changes:   {_fig(d['lead_changes'])}")
        for kind, label in (("period", "End of a period"), ("game", "End of the game")):
            lines.append(f"{label} triggered by (games):")
            for t, c in d["triggers"].get(kind, {}).items():
                lines.append(f"  {c:>6}  {t}")
        if d["never_reached"]:
            lines.append("Never reached: " + ", ".join(d["never_reached"]))
        if d["rare"]:
            lines.append(f"Rare (under {RARE:.0%} of games): " + ", ".join(d["rare"]))
    c = data.get("compare")
    if c:
        lines += [
            "",
            f"== {c['other']} against {c['base']}, paired on {c['games']} seeds "
            "(* : the 95% interval leaves out 0) ==",
            "",
            "Win rate per seat:",
        ]
        for s in c["seats"]:
            lines.append(f"  seat {s['seat']}  {_diff(s, pct=True)}")
        bal = c["balance"]
        lines.append(f"Balance: {bal['base']:.3f} -> {bal['other']:.3f} ({bal['diff']:+.3f})")
        for a, s in c["agents"].items():
            lines.append(f"  agent {a}  {_diff(s, pct=True)}")
        for group in ("length", "score", "sources"):
            lines.append(group.capitalize() + ":")
            for k, s in c[group].items():
                lines.append(f"  {k:<16} {_diff(s)}")
        lines.append(f"Margin:          {_diff(c['margin'])}")
        lines.append(f"Lead changes:    {_diff(c['lead_changes'])}")
        lines.append("Triggers (share of games):")
        for kind in ("period", "game"):
            for t, s in c["triggers"].get(kind, {}).items():
                lines.append(f"  {kind:<6} {t:<24} {_diff(s, pct=True)}")
    return "\n".join(lines) + "\n"

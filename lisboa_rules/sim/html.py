"""The balance report as one HTML page: tables of every figure and, with the `report` extra
(matplotlib), plots as inline static SVG: the score per source, the win rate per seat with its
interval, and the game length. The page loads nothing (it opens offline) and prints; every
string from the data goes through core/encode.py's `html_text`."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from lisboa_rules.core.diagnostics import PROG
from lisboa_rules.core.encode import html_text
from lisboa_rules.sim.runner import GameRecord

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em auto; max-width: 60em; color: #111; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 2em; } h3 { font-size: 1.05em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { border: 1px solid #bbb; padding: .2em .6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
thead th { background: #eee; }
.note { color: #555; } .sig { font-weight: bold; }
figure { margin: 1em 0; page-break-inside: avoid; } figure svg { max-width: 100%; height: auto; }
@media print { body { margin: 0; max-width: none; } h2 { page-break-before: auto; }
  table, figure { page-break-inside: avoid; } }
"""


def _e(x: object) -> str:
    return str(html_text(x))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    out = ["<table><thead><tr>", *(f"<th>{_e(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _fig_row(label: str, f: dict[str, Any]) -> list[object]:
    return [
        label,
        f"{f['mean']:.2f}",
        f"{f['sd']:.2f}",
        f"{f['q05']:g}",
        f"{f['q50']:g}",
        f"{f['q95']:g}",
    ]


FIG_HEAD = ("", "mean", "sd", "q05", "median", "q95")


def _diff_row(label: str, d: dict[str, Any], pct: bool = False) -> list[object]:
    def f(x: float, sign: str = "") -> str:
        return f"{100 * x:{sign}.1f}%" if pct else f"{x:{sign}.3f}"

    return [
        label,
        f(d["base"]),
        f(d["other"]),
        f(d["diff"], "+"),
        f"[{f(d['ci95'][0], '+')}, {f(d['ci95'][1], '+')}]",
        "yes" if d["significant"] else "no",
    ]


DIFF_HEAD = ("", "base", "other", "difference", "95% interval", "interval leaves out 0")


def rule_set_section(name: str, d: dict[str, Any]) -> str:
    parts = [
        f"<h2>{_e(name)}</h2>",
        f"<p>Variants: {_e(', '.join(d['variants']) or 'none')}. Balance (1 minus the "
        f"largest gap between two seats' win rates): <b>{d['balance']:.3f}</b>.</p>",
        "<h3>Win rate per seat</h3>",
        _table(
            ("seat", "colour", "wins", "shared", "win rate", "95% interval"),
            [
                [
                    s["seat"],
                    s["color"],
                    s["wins"],
                    s["shared"],
                    _pct(s["win_rate"]),
                    f"[{_pct(s['ci95'][0])}, {_pct(s['ci95'][1])}]",
                ]
                for s in d["seats"]
            ],
        ),
        "<h3>Agents</h3>",
        _table(
            ("agent", "seats played", "wins", "win rate", "95% interval"),
            [
                [
                    a,
                    s["games"],
                    s["wins"],
                    _pct(s["win_rate"]),
                    f"[{_pct(s['ci95'][0])}, {_pct(s['ci95'][1])}]",
                ]
                for a, s in d["agents"].items()
            ],
        ),
    ]
    if d["versus"]:
        parts.append(
            _table(
                ("agent", "finished above", "share", "95% interval", "meetings"),
                [
                    [
                        a,
                        b,
                        _pct(s["win_rate"]),
                        f"[{_pct(s['ci95'][0])}, {_pct(s['ci95'][1])}]",
                        s["games"],
                    ]
                    for a, row in d["versus"].items()
                    for b, s in row.items()
                ],
            )
        )
    parts.append("<h3>Game length, score and margin</h3>")
    rows = [_fig_row(k, f) for k, f in d["length"].items()]
    rows += [_fig_row(f"score: {k}", f) for k, f in d["score"].items()]
    rows += [_fig_row(f"{s['name']} ({sid})", s) for sid, s in d["sources"].items()]
    rows += [_fig_row("winning margin", d["margin"]), _fig_row("lead changes", d["lead_changes"])]
    parts.append(_table(FIG_HEAD, rows))
    parts.append("<h3>End triggers (games in which each fired)</h3>")
    parts.append(
        _table(
            ("ends", "trigger", "games"),
            [[kind, t, c] for kind, row in d["triggers"].items() for t, c in row.items()],
        )
    )
    if d["never_reached"]:
        parts.append(f"<p>Never reached: {_e(', '.join(d['never_reached']))}.</p>")
    if d["rare"]:
        parts.append(f"<p>Rare (under 1% of the games): {_e(', '.join(d['rare']))}.</p>")
    return "\n".join(parts)


def compare_section(c: dict[str, Any]) -> str:
    rows = [_diff_row(f"seat {s['seat']} win rate", s, True) for s in c["seats"]]
    rows += [_diff_row(f"agent {a} win rate", s, True) for a, s in c["agents"].items()]
    rows += [_diff_row(k, s) for k, s in c["length"].items()]
    rows += [_diff_row(f"score: {k}", s) for k, s in c["score"].items()]
    rows += [_diff_row(k, s) for k, s in c["sources"].items()]
    rows += [_diff_row("winning margin", c["margin"]), _diff_row("lead changes", c["lead_changes"])]
    rows += [
        _diff_row(f"{kind}: {t}", s, True)
        for kind, row in c["triggers"].items()
        for t, s in row.items()
    ]
    bal = c["balance"]
    return "\n".join(
        [
            f"<h2>{_e(c['other'])} against {_e(c['base'])}</h2>",
            f"<p>Paired on the same {c['games']} seeds and lineups: each figure is the mean of the "
            "game-by-game differences (other minus base) with its 95% interval. Balance "
            f"{bal['base']:.3f} → {bal['other']:.3f}.</p>",
            _table(DIFF_HEAD, rows),
        ]
    )


def plots(data: dict[str, Any], records: dict[str, list[GameRecord]]) -> list[tuple[str, str]]:
    """(caption, inline SVG) per plot; [] when matplotlib is not installed."""
    try:
        import matplotlib
        from matplotlib.figure import Figure  # no pyplot: no global figure or backend state
    except ImportError:
        return []
    style: Any = {
        "svg.hashsalt": "balance-report",
        "text.parse_math": False,
        "svg.fonttype": "path",
        "font.size": 9,
    }
    out = []
    names = list(data["rule_sets"])
    with matplotlib.rc_context(style):
        # win rate per seat, with the Wilson interval
        fig = Figure(figsize=(7, 3))
        ax = fig.subplots()
        width = 0.8 / len(names)
        for k, name in enumerate(names):
            seats = data["rule_sets"][name]["seats"]
            xs = [s["seat"] + (k - (len(names) - 1) / 2) * width for s in seats]
            rates = [s["win_rate"] for s in seats]
            err = [
                [r - s["ci95"][0] for r, s in zip(rates, seats, strict=True)],
                [s["ci95"][1] - r for r, s in zip(rates, seats, strict=True)],
            ]
            ax.bar(xs, rates, width, yerr=err, capsize=3, label=name)
        ax.set_xticks(range(len(data["rule_sets"][names[0]]["seats"])))
        ax.set_xlabel("seat")
        ax.set_ylabel("win rate (95% interval)")
        ax.set_ylim(0, 1)
        ax.legend()
        out.append(("Win rate per seat, with its 95% Wilson interval", _svg(fig)))
        # the score per source
        source_names: dict[str, str] = {}  # every rule set's sources (a house rule may add)
        for name in names:
            for sid, src in data["rule_sets"][name]["sources"].items():
                source_names.setdefault(sid, src["name"])
        ids = list(source_names)
        fig = Figure(figsize=(7, 0.5 + 0.45 * len(ids) * len(names)))
        ax = fig.subplots()
        labels, samples = [], []
        for sid in ids:
            for name in names:
                samples.append([p.get(sid, 0) for r in records[name] for p in r.sources])
                label = source_names[sid]
                labels.append(f"{label} ({name})" if len(names) > 1 else label)
        sideways: Any = (  # `orientation` from matplotlib 3.10 on, `vert` (deprecated) before
            {"orientation": "horizontal"}
            if tuple(int(x) for x in matplotlib.__version__.split(".")[:2]) >= (3, 10)
            else {"vert": False}
        )
        ax.boxplot(samples[::-1], whis=(5, 95), showmeans=True, **sideways)
        ax.set_yticks(range(1, len(labels) + 1), labels[::-1])
        ax.set_xlabel("points per player\n(box: quartiles, whiskers: 5% and 95%, ▲ mean)")
        out.append(("Score per scoring source", _svg(fig)))
        # game length
        fig = Figure(figsize=(7, 3))
        ax = fig.subplots()
        for name in names:
            turns = [r.turns for r in records[name]]
            lo, hi = min(turns), max(turns)
            ax.hist(turns, bins=range(lo, hi + 2), alpha=0.6, label=name, align="left")
        ax.set_xlabel("turns")
        ax.set_ylabel("games")
        ax.legend()
        out.append(("Game length in turns", _svg(fig)))
    return out


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.tight_layout()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg") :]  # inline: no XML declaration or doctype


def page(data: dict[str, Any], records: dict[str, list[GameRecord]]) -> str:
    """The whole page."""
    run = data["run"]
    body = [
        f"<h1>Balance report: {_e(', '.join(data['rule_sets']))}</h1>",
        f"<p>{run['games']} games per rule set, {run['players']} players, seeds "
        f"{run['seed']} to {run['seed'] + run['games'] - 1}, agents "
        f"{_e(', '.join(run['agents']))} (rotating one seat per game). Intervals are 95% "
        "Wilson intervals.</p>",
    ]
    figures = plots(data, records)
    if figures:
        for caption, svg in figures:
            body.append(f"<figure>{svg}<figcaption>{_e(caption)}</figcaption></figure>")
    else:
        body.append(
            f'<p class="note">The plots need the report extra: pip install '
            f"'{_e(PROG)}[report]' (matplotlib). The tables below have every figure."
            "</p>"
        )
    for name, d in data["rule_sets"].items():
        body.append(rule_set_section(name, d))
    if data.get("compare"):
        body.append(compare_section(data["compare"]))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_e('Balance report')}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )

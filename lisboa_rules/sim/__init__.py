"""Simulated play over a generated engine: loading it (engine.py), agents (agents.py), seeded
runs (runner.py) on an executor (executors.py), statistics (stats.py), the balance report
(report.py, html.py) and `simulate`'s summary (summary.py).

Everything here uses the engine's public API only and names no concept of the game, so it
works for any rule set, variant or house rule."""

from lisboa_rules.sim.agents import AGENTS, Agent, make_agent

__all__ = ["AGENTS", "Agent", "make_agent"]

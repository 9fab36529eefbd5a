"""The compiler's intermediate representation: what the engine does, in no target's syntax.

`types.py` holds the types of values (`VType`); `expr.py` the expression nodes the checker of
the effect language (`lang/typed.py`) builds and that every back end prints (`pyprint/` for
Python). A node names what the rules name (a field of the state, a local, a column of a table
of the rules data, a cost); a printer alone turns those names into its language's identifiers.
The compiler's decisions about an expression are made on its nodes, never on a printed form:
`const.py` says which nodes are constants and computes a constant expression where the rules
are compiled, `reads.py` what an expression reads, `logic.py` a condition negated.
"""

"""The engine back end: the view the engine template renders, Python formatting, the state
schema, the runtime as text."""

"""The reference back end: Markdown and HTML pages, formula words."""

"""The small languages of the rules data: formulas, rule text, the vocabulary."""

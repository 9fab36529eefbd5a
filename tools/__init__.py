"""Development tools: the fuzzer and the reference interpreter (not shipped)."""

"""`python -m lisboa_rules`: the same CLI as the `lisboa-rules` script."""

from lisboa_rules.cli.main import main

raise SystemExit(main())

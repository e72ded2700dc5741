"""Each `golem` command group, one module each."""

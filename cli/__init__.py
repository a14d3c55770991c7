"""The `sourcead` command line (installed as the private package `_sourcead_cli`)."""

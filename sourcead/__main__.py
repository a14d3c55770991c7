"""`python -m sourcead` runs the command-line interface."""

from _sourcead_cli.main import main

main()

"""One module per command-line command; each exposes ``add_parser`` and ``run``."""

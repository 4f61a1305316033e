"""Leaf package: domain types, errors, stamps, specs, settings, store, ports, cassettes.

``core`` imports none of ``oracles``, ``gate``, ``miners`` or ``bot``.
"""

"""Go's contract kinds: each module defining ``CONTRACT_KIND`` adds one."""

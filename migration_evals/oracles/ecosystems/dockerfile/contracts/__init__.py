"""The Dockerfile contract kinds: each module defining ``CONTRACT_KIND`` adds one."""

"""One package per build ecosystem (``maven``, ``go``, ``dockerfile``), each behind the
interface of ``.interface``; ``.registry`` finds them and is what the cascade and the
tiers call. Kept empty so that importing one ecosystem's module imports nothing else."""

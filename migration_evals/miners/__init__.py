"""Changeset providers, survival mining, gold-anchor growth and the retroactive-scoring unlock.

::

    github             the GitHub changeset provider on the one GitHub client (limits on the clock)
    tracking           agent PRs the bot graded, followed until their label is final
    history            what git says became of a merge: its commits, reverts, the day-30 state
    lines              which lines a change added, and how many are still its own later
    labels             accepted / rejected / pending, with the evidence: one core, two sources
    survival           the nightly refresh of tracked PRs (``mine survival``)
    gold               growing the gold table from a query (``mine gold``)
    agents             agent authorship from git: authors, trailers, generator lines
    git_changes        merged changes from git alone: a commit list, or discovered
    git_gold           growing the gold table from git alone (``mine gold --git``)
    funnel             the cascade's verdict on a mined changeset: ledger, or graded now
    retro              the retroactive-scoring unlock and retroactive trials
    clones, policy, tables   mirror clones, the spec's gold policy, the miners' tables

Imports flow ``bot -> miners -> core``: grading arrives as an injected callable.
"""

"""Composition root: command line, webhook app, check runs, slash commands, scheduler, jobs."""

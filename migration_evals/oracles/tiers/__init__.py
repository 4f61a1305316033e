"""The four oracle tiers. Each evaluates one trial and returns a ``TierOutcome`` value."""

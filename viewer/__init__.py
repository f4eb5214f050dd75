"""The rollout viewer: analysis of an artifact (pure functions) and the UI built on it."""

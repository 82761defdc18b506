"""Property-based tests (hypothesis) for the framer, the codec and the validator."""

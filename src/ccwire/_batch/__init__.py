"""Many agent sessions from one task list: bounded, retried, resumable (``ccwire.batch``)."""

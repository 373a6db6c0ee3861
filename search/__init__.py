"""Search graph views, selection policies and termination rules: pure algorithms, no I/O."""

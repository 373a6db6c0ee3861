"""Hardware targets (data records), execution backends and sandboxed evaluation workers."""

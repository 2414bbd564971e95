"""The running server: the event-loop coalescing and the garbage-collector settings."""
